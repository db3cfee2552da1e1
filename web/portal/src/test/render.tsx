import { MantineProvider } from "@mantine/core";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { MemoryRouter } from "react-router";

/** ``element`` as the portal renders it: in the component library's provider and a router. */
export function renderPage(element: ReactElement) {
  return render(
    <MantineProvider>
      <MemoryRouter>{element}</MemoryRouter>
    </MantineProvider>,
  );
}

/** A stand-in for the portal API's answers: each call of ``fetch`` takes the next one. */
export function answers(...queued: { status: number; body?: unknown }[]) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    calls.push({ url, init });
    const next = queued.shift();
    if (next === undefined) throw new Error(`no answer left for ${init.method ?? "GET"} ${url}`);
    const type = next.status >= 400 ? "application/problem+json" : "application/json";
    const body = next.body === undefined ? null : JSON.stringify(next.body);
    return new Response(body, {
      status: next.status,
      headers: { "Content-Type": type },
    });
  };
  return { fetch, calls };
}
