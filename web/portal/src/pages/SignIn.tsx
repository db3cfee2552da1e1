import {
  Alert,
  Anchor,
  Button,
  Code,
  Center,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { Problem } from "../api";
import { useSession } from "../auth";
import { Refusal, useAction, useFields } from "../loading";

export function SignInPage() {
  const { signIn } = useSession();
  const { busy, problem, run } = useAction();
  const credentials = useFields({ email: "", password: "" });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(() => signIn(credentials.values.email, credentials.values.password));
  };

  return (
    <Center py="xl">
      <Paper withBorder p="xl" w={400}>
        <form onSubmit={submit} aria-label="Sign in">
          <Stack>
            <Title order={1} size="h2">
              Sign in
            </Title>
            {problem instanceof Problem && problem.kind === "token-issuance-disabled" ? (
              <SignInIsOff />
            ) : (
              <Refusal problem={problem} title="Sign-in refused" />
            )}
            <TextInput
              label="Email"
              type="email"
              autoComplete="username"
              required
              {...credentials.bind("email")}
            />
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              required
              {...credentials.bind("password")}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
            <Text size="sm">
              No account yet?{" "}
              <Anchor component={Link} to="/register">
                Register
              </Anchor>
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

/** The portal cannot sign anyone in until its operator switches token issuance on (the seed:
 * it is off until the identity provider's web API key is set). Said as such, to the developer
 * who tried and to the operator who can fix it, rather than as a refused password. */
function SignInIsOff() {
  return (
    <Alert color="yellow" role="alert" title="Signing in is not switched on yet">
      <Stack gap="xs">
        <Text size="sm">
          Nothing is wrong with your email or password: this portal does not sign anyone in until
          its operator turns signing in on. Try again later, or ask the portal's operator.
        </Text>
        <Text size="sm">
          Operator: run <Code>portico admin-api set-web-api-key</Code> on the server (or set{" "}
          <Code>PORTICO_IDP_WEB_API_KEY</Code>), then sign in again.
        </Text>
      </Stack>
    </Alert>
  );
}
