import { createContext, useCallback, useContext, useEffect, useMemo, useState } from "react";
import type { ReactNode } from "react";

import {
  acceptInvitation as requestAcceptance,
  adminSignOut,
  exchangeSamlCode,
  get,
  signIn as requestTokens,
  storeTokens,
  storedTokens,
} from "./api";

export interface MeOrg {
  id: string;
  name: string;
  roles: string[];
  permissions: string[];
}

export interface Me {
  id: string;
  email: string;
  displayName: string;
  isPlatformAdmin: boolean;
  orgs: MeOrg[];
}

interface Auth {
  me: Me | null;
  loading: boolean;
  org: MeOrg | null;
  chooseOrg: (id: string) => void;
  can: (permission: string) => boolean;
  signIn: (email: string, password: string) => Promise<void>;
  /** Finish a SAML sign-in: exchange the code its identity provider's round trip ended with. */
  signInWithSamlCode: (code: string) => Promise<void>;
  /** Accept an invitation, then be signed in as the invited account. */
  acceptInvitation: (token: string, password: string, displayName: string | null) => Promise<void>;
  signOut: () => void;
}

const AuthContext = createContext<Auth | null>(null);
const ORG_KEY = "portico.console.org";

export function AuthProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [loading, setLoading] = useState(storedTokens() !== null);
  const [orgId, setOrgId] = useState<string | null>(sessionStorage.getItem(ORG_KEY));

  const load = useCallback(async () => {
    setLoading(true);
    try {
      setMe(await get<Me>("/api/me"));
    } catch {
      storeTokens(null);
      setMe(null);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    if (storedTokens()) void load();
  }, [load]);

  const value = useMemo<Auth>(() => {
    const org = me?.orgs.find((o) => o.id === orgId) ?? me?.orgs[0] ?? null;
    return {
      me,
      loading,
      org,
      chooseOrg: (id) => {
        sessionStorage.setItem(ORG_KEY, id);
        setOrgId(id);
      },
      can: (permission) => org?.permissions.includes(permission) ?? false,
      signIn: async (email, password) => {
        await requestTokens(email, password);
        await load();
      },
      signInWithSamlCode: async (code) => {
        await exchangeSamlCode(code);
        await load();
      },
      acceptInvitation: async (token, password, displayName) => {
        await requestAcceptance(token, password, displayName);
        await load();
      },
      signOut: () => {
        storeTokens(null);
        adminSignOut();
        sessionStorage.removeItem(ORG_KEY);
        setMe(null);
      },
    };
  }, [me, loading, orgId, load]);

  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside AuthProvider");
  return auth;
}
