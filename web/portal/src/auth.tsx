import { createContext, useCallback, useContext, useEffect, useMemo, useState } from "react";
import type { ReactNode } from "react";

import { obtainTokens, portal, tokenStore } from "./api";
import type { Me } from "./types";

interface Session {
  /** the signed-in developer; null when signed out (the catalogue is open to everyone) */
  me: Me | null;
  /** true while a kept token is being checked, so that a reload does not flash "Sign in" */
  checking: boolean;
  signIn: (email: string, password: string) => Promise<void>;
  signOut: () => void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(() => tokenStore.read() !== null);

  const identify = useCallback(async () => {
    try {
      setMe(await portal<Me>("GET", "/me"));
    } catch {
      tokenStore.write(null); // expired beyond renewal, or the account was blocked
      setMe(null);
    } finally {
      setChecking(false);
    }
  }, []);

  useEffect(() => {
    if (tokenStore.read() !== null) void identify();
  }, [identify]);

  const session = useMemo<Session>(
    () => ({
      me,
      checking,
      signIn: async (email, password) => {
        await obtainTokens(email, password);
        await identify();
      },
      signOut: () => {
        tokenStore.write(null);
        setMe(null);
      },
    }),
    [me, checking, identify],
  );
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === null) throw new Error("useSession outside SessionProvider");
  return session;
}
