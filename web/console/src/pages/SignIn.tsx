import {
  Alert,
  Button,
  Center,
  Divider,
  Paper,
  PasswordInput,
  Stack,
  TextInput,
  Title,
} from "@mantine/core";
import { useEffect, useState } from "react";
import type { FormEvent } from "react";

import { signInOptions, startSamlSignIn, takeSamlCode } from "../api";
import type { SignInOption } from "../api";
import { useAuth } from "../auth";

/** "Sign in with <name>"; the organisation is named too when two share a name. */
function optionLabel(option: SignInOption, all: SignInOption[]): string {
  const shared = all.filter((o) => o.name === option.name).length > 1;
  return shared ? `Sign in with ${option.name} (${option.orgName})` : `Sign in with ${option.name}`;
}

export function SignInPage() {
  const { signIn, signInWithSamlCode } = useAuth();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [options, setOptions] = useState<SignInOption[]>([]);

  useEffect(() => {
    // back from an identity provider: the fragment holds the sign-in's one-time code
    const code = takeSamlCode();
    if (code) {
      setBusy(true);
      signInWithSamlCode(code)
        .catch((failure: unknown) =>
          setError(failure instanceof Error ? failure.message : String(failure)),
        )
        .finally(() => setBusy(false));
    }
    // the active identity-provider configurations (none: email and password only)
    signInOptions()
      .then(setOptions)
      .catch(() => setOptions([]));
  }, [signInWithSamlCode]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email, password);
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center h="100vh">
      <Paper withBorder p="xl" w={380}>
        <form onSubmit={submit} aria-label="Sign in">
          <Stack>
            <Title order={2}>Sign in to Portico</Title>
            {error && (
              <Alert color="red" role="alert" title="Sign-in refused">
                {error}
              </Alert>
            )}
            <TextInput
              label="Email"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
        {options.length > 0 && (
          <Stack mt="md">
            <Divider label="or" labelPosition="center" />
            {options.map((option) => (
              <Button
                key={option.id}
                variant="default"
                disabled={busy}
                onClick={() => void startSamlSignIn(option)}
              >
                {optionLabel(option, options)}
              </Button>
            ))}
          </Stack>
        )}
      </Paper>
    </Center>
  );
}
