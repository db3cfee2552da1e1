import { Center, Loader } from "@mantine/core";
import { lazy, Suspense } from "react";
import type { ComponentType } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router";

import { useAuth } from "./auth";
import { SignInPage } from "./pages/SignIn";

/** A page loaded when it is first shown: the sign-in route loads only what it needs (React,
 * the component library, the sign-in form); each page's code, and what only it uses (the
 * charts, the form generator), comes with the page. */
function page(load: () => Promise<ComponentType>): ComponentType {
  const Loaded = lazy(() => load().then((component) => ({ default: component })));
  return function Page() {
    return (
      <Suspense fallback={<Loader aria-label="Loading the page" />}>
        <Loaded />
      </Suspense>
    );
  };
}

const AcceptInvitationPage = page(() =>
  import("./pages/AcceptInvitation").then((m) => m.AcceptInvitationPage),
);
const Layout = lazy(() => import("./Layout").then((m) => ({ default: m.Layout })));
const EnvironmentsPage = page(() => import("./pages/Environments").then((m) => m.EnvironmentsPage));
const EnvironmentPage = page(() => import("./pages/Environment").then((m) => m.EnvironmentPage));
const UpstreamsPage = page(() => import("./pages/Upstreams").then((m) => m.UpstreamsPage));
const ApisPage = page(() => import("./pages/Apis").then((m) => m.ApisPage));
const ApiPage = page(() => import("./pages/Api").then((m) => m.ApiPage));
const AnalyticsPage = page(() => import("./pages/Analytics").then((m) => m.AnalyticsPage));
const ProductsPage = page(() => import("./pages/Products").then((m) => m.ProductsPage));
const AccessPage = page(() => import("./pages/Access").then((m) => m.AccessPage));
const RegistrationsPage = page(() =>
  import("./pages/Registrations").then((m) => m.RegistrationsPage),
);
const AuditLogPage = page(() => import("./pages/AuditLog").then((m) => m.AuditLogPage));

const loading = (
  <Center h="100vh">
    <Loader aria-label="Loading" />
  </Center>
);

export function App() {
  const { me, loading: signingIn } = useAuth();
  const { pathname } = useLocation();
  // an invitation link's page, signed in or not (accepting signs in as the invited account)
  if (pathname === "/accept-invitation") return <AcceptInvitationPage />;
  if (signingIn) return loading;
  if (!me) return <SignInPage />;
  return (
    <Suspense fallback={loading}>
      <Routes>
        <Route element={<Layout />}>
          <Route index element={<Navigate to="/environments" replace />} />
          <Route path="environments" element={<EnvironmentsPage />} />
          <Route path="environments/:envId" element={<EnvironmentPage />} />
          <Route path="upstreams" element={<UpstreamsPage />} />
          <Route path="apis" element={<ApisPage />} />
          <Route path="apis/:apiId" element={<ApiPage />} />
          <Route path="analytics" element={<AnalyticsPage />} />
          <Route path="products" element={<ProductsPage />} />
          <Route path="access" element={<AccessPage />} />
          <Route path="audit-log" element={<AuditLogPage />} />
          <Route path="portal-registrations" element={<RegistrationsPage />} />
          <Route path="*" element={<Navigate to="/environments" replace />} />
        </Route>
      </Routes>
    </Suspense>
  );
}
