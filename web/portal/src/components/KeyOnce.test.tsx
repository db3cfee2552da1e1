import { fireEvent, screen, waitFor } from "@testing-library/react";
import { expect, test, vi } from "vitest";

import { renderPage } from "../test/render";
import type { AppWithKey } from "../types";
import { KeyOnce } from "./KeyOnce";

const APP: AppWithKey = {
  id: "4b1f",
  name: "shop",
  description: "",
  key_hint: "pk_7Hq",
  key_issued_at: "2026-11-26T10:00:00Z",
  created_at: "2026-11-26T10:00:00Z",
  credentials: [{ type: "key-auth", key: "pk_7Hq2secret-part-of-the-key" }],
};

test("the key is shown in full, copied by its button, and forgotten when done", async () => {
  const copied: string[] = [];
  Object.defineProperty(navigator, "clipboard", {
    configurable: true,
    value: { writeText: async (text: string) => void copied.push(text) },
  });
  const done = vi.fn();
  renderPage(<KeyOnce app={APP} onDone={done} />);

  const region = screen.getByRole("region", { name: "New key" });
  expect(region.textContent).toContain("it is shown once");
  const field = screen.getByRole("textbox", {
    name: "API key",
  }) as HTMLInputElement;
  expect(field.value).toBe("pk_7Hq2secret-part-of-the-key");
  expect(field.readOnly).toBe(true);

  fireEvent.click(screen.getByRole("button", { name: "Copy key" }));
  await waitFor(() => expect(copied).toEqual(["pk_7Hq2secret-part-of-the-key"]));
  expect(screen.getByRole("button", { name: "Copy key" }).textContent).toBe("Copied");

  fireEvent.click(screen.getByRole("button", { name: "I have stored the key" }));
  expect(done).toHaveBeenCalledOnce();
});
