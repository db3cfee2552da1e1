// What Mantine reads from a browser and jsdom does not have: media queries (answered "no
// match") and element resizing (charts measure their box).
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

Object.defineProperty(window, "matchMedia", {
  writable: true,
  value: (query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addEventListener: () => {},
    removeEventListener: () => {},
    addListener: () => {},
    removeListener: () => {},
    dispatchEvent: () => false,
  }),
});

class NoResizing {
  observe() {}
  unobserve() {}
  disconnect() {}
}
window.ResizeObserver = NoResizing;
window.HTMLElement.prototype.scrollIntoView = () => {};

afterEach(() => {
  cleanup();
  sessionStorage.clear();
});
