import { Alert } from "@mantine/core";
import { useState } from "react";

import { ApiError, atFields } from "./api";

/** A form's call to the API: busy while it runs; the API's refusal kept as its field errors
 * (by JSON pointer, shown at the fields) and its message. */
export function useSubmission() {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(action: () => Promise<void>) {
    setBusy(true);
    setErrors({});
    setFailure(null);
    try {
      await action();
    } catch (error) {
      if (error instanceof ApiError) setErrors(atFields(error.fieldErrors()));
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  }

  return { errors, failure, busy, submit };
}

/** A refusal, announced to screen readers. */
export function Failure({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <Alert color="red" role="alert">
      {message}
    </Alert>
  );
}
