import {
  Anchor,
  Button,
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
            <Refusal problem={problem} title="Sign-in refused" />
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
