import { Center, Loader } from "@mantine/core";
import type { ReactElement } from "react";
import { Navigate, Route, Routes } from "react-router";

import { useSession } from "./auth";
import { Layout } from "./Layout";
import { ApiPage } from "./pages/ApiPage";
import { AppPage } from "./pages/AppPage";
import { AppsPage } from "./pages/Apps";
import { CataloguePage } from "./pages/Catalogue";
import { InvitationPage } from "./pages/Invitation";
import { ProductPage } from "./pages/ProductPage";
import { RegisterPage } from "./pages/Register";
import { SignInPage } from "./pages/SignIn";

/** The catalogue is open to everyone; a developer's own pages send a signed-out visitor to
 * sign in, and back once signed in. */
export function App() {
  const { me, checking } = useSession();
  if (checking) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  const own = (page: ReactElement) => (me ? page : <SignInPage />);
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={<CataloguePage />} />
        <Route path="apis/:apiId" element={<ApiPage />} />
        <Route path="products/:productId" element={<ProductPage />} />
        <Route path="sign-in" element={me ? <Navigate to="/apps" replace /> : <SignInPage />} />
        <Route path="register" element={<RegisterPage />} />
        <Route path="invitations/:token" element={<InvitationPage />} />
        <Route path="apps" element={own(<AppsPage />)} />
        <Route path="apps/:appId" element={own(<AppPage />)} />
        <Route path="*" element={<Navigate to="/" replace />} />
      </Route>
    </Routes>
  );
}
