import { Center, Loader } from "@mantine/core";
import { lazy, Suspense } from "react";
import { Navigate, Route, Routes } from "react-router";

import { useAuth } from "./auth";
import { Layout } from "./Layout";
import { AccessPage } from "./pages/Access";
import { ApiPage } from "./pages/Api";
import { ApisPage } from "./pages/Apis";
import { AuditLogPage } from "./pages/AuditLog";
import { EnvironmentPage } from "./pages/Environment";
import { EnvironmentsPage } from "./pages/Environments";
import { ProductsPage } from "./pages/Products";
import { SignInPage } from "./pages/SignIn";
import { UpstreamsPage } from "./pages/Upstreams";

// the charts library is most of a bundle: loaded with the analytics page only
const AnalyticsPage = lazy(() =>
  import("./pages/Analytics").then((m) => ({ default: m.AnalyticsPage })),
);

export function App() {
  const { me, loading } = useAuth();
  if (loading) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (!me) return <SignInPage />;
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={<Navigate to="/environments" replace />} />
        <Route path="environments" element={<EnvironmentsPage />} />
        <Route path="environments/:envId" element={<EnvironmentPage />} />
        <Route path="upstreams" element={<UpstreamsPage />} />
        <Route path="apis" element={<ApisPage />} />
        <Route path="apis/:apiId" element={<ApiPage />} />
        <Route
          path="analytics"
          element={
            <Suspense fallback={<Loader aria-label="Loading analytics" />}>
              <AnalyticsPage />
            </Suspense>
          }
        />
        <Route path="products" element={<ProductsPage />} />
        <Route path="access" element={<AccessPage />} />
        <Route path="audit-log" element={<AuditLogPage />} />
        <Route path="*" element={<Navigate to="/environments" replace />} />
      </Route>
    </Routes>
  );
}
