import { useCallback, useEffect, useState } from "react";

import { get } from "./api";

export interface Fetched<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

/** GET ``path`` when it changes; ``reload`` asks again (after a change the page made). */
export function useFetched<T>(path: string): Fetched<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    get<T>(path)
      .then((found) => current && (setData(found), setError(null)))
      .catch((failure: Error) => current && setError(failure))
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [path, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload };
}
