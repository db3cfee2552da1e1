import { MantineProvider } from "@mantine/core";
import { render } from "@testing-library/react";
import type { ReactElement, ReactNode } from "react";
import { MemoryRouter } from "react-router";

import { AuthProvider, useAuth } from "../auth";

/** What App does before a page: nothing until the caller is known. */
function Gate({ children }: { children: ReactNode }) {
  const { me, loading } = useAuth();
  return loading || !me ? null : children;
}

/** ``ui`` as the console renders a page: the component library's provider, a router, and
 * the signed-in caller (``/api/me``, answered by the fetch the test installs). */
export function renderInConsole(ui: ReactElement) {
  return render(
    <MantineProvider env="test">
      <MemoryRouter>
        <AuthProvider>
          <Gate>{ui}</Gate>
        </AuthProvider>
      </MemoryRouter>
    </MantineProvider>,
  );
}
