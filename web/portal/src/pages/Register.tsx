import {
  Alert,
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
import { useState } from "react";
import type { FormEvent } from "react";
import { Link } from "react-router";

import { portal } from "../api";
import { Refusal, useAction, useFields } from "../loading";

/** Sign-up: the account waits for an administrator's approval, which is emailed. The answer
 * is the same whether or not the address had an account (the API does not tell). */
export function RegisterPage() {
  const [received, setReceived] = useState(false);
  const { busy, problem, fieldError, run } = useAction();
  const form = useFields({ display_name: "", email: "", password: "" }, fieldError);
  const field = form.bind;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await portal("POST", "/registrations", form.values);
      setReceived(true);
    });
  };

  return (
    <Center py="xl">
      <Paper withBorder p="xl" w={440}>
        {received ? (
          <Alert color="green" role="status" title="Registration received">
            <Stack gap="xs">
              <Text size="sm">
                An administrator reviews new registrations. You will get an email at{" "}
                {form.values.email} once your account is approved; then{" "}
                <Anchor component={Link} to="/sign-in">
                  sign in
                </Anchor>
                .
              </Text>
            </Stack>
          </Alert>
        ) : (
          <form onSubmit={submit} aria-label="Register">
            <Stack>
              <Title order={1} size="h2">
                Register
              </Title>
              <Refusal problem={problem} title="Registration refused" />
              <TextInput label="Name" autoComplete="name" required {...field("display_name")} />
              <TextInput
                label="Email"
                type="email"
                autoComplete="email"
                required
                {...field("email")}
              />
              <PasswordInput
                label="Password"
                description="At least 12 characters."
                autoComplete="new-password"
                required
                {...field("password")}
              />
              <Button type="submit" loading={busy}>
                Register
              </Button>
              <Text size="sm">
                Already registered?{" "}
                <Anchor component={Link} to="/sign-in">
                  Sign in
                </Anchor>
              </Text>
            </Stack>
          </form>
        )}
      </Paper>
    </Center>
  );
}
