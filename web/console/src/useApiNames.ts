import { useEffect, useState } from "react";

import { get } from "./api";

/** The names of the APIs of these ids (``{id: name}``), each asked for once by id: an
 * organisation may have too many APIs to list them all for a few names. */
export function useApiNames(base: string, ids: string[]): Record<string, string> {
  const [names, setNames] = useState<Record<string, string>>({});
  const wanted = [...new Set(ids)].sort().join(",");
  useEffect(() => {
    let current = true;
    const missing = wanted ? wanted.split(",").filter((id) => !(id in names)) : [];
    if (missing.length === 0) return;
    Promise.all(
      missing.map((id) =>
        get<{ id: string; name: string }>(`${base}/apis/${id}`).then(
          (api) => [id, api.name] as const,
          () => [id, "(deleted API)"] as const,
        ),
      ),
    ).then((found) => current && setNames((known) => ({ ...known, ...Object.fromEntries(found) })));
    return () => {
      current = false;
    };
    // names is read, not followed: what was asked for once stays known
  }, [base, wanted]);
  return names;
}
