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
import { Link, useParams } from "react-router";

import { portal } from "../api";
import { useSession } from "../auth";
import { Refusal, useAction, useFields } from "../loading";

interface Accepted {
  organisation_name: string;
  account_status: string;
}

/** An organisation's invitation, from its email's link: accepted with the password the
 * account chooses (one the invitation created) or has (an existing one); a signed-in
 * developer accepts as who they are. */
export function InvitationPage() {
  const { token = "" } = useParams();
  const { me } = useSession();
  const [accepted, setAccepted] = useState<Accepted | null>(null);
  const { busy, problem, fieldError, run } = useAction();
  const form = useFields({ password: "", display_name: "" }, fieldError);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { password, display_name } = form.values;
    const body = {
      token,
      ...(password ? { password } : {}),
      ...(display_name.trim() ? { display_name } : {}),
    };
    void run(async () => setAccepted(await portal<Accepted>("POST", "/invitations/accept", body)));
  };

  return (
    <Center py="xl">
      <Paper withBorder p="xl" w={440}>
        {accepted ? (
          <Alert color="green" role="status" title="Invitation accepted">
            You are a member of {accepted.organisation_name}.{" "}
            {!me && (
              <Anchor component={Link} to="/sign-in">
                Sign in
              </Anchor>
            )}
          </Alert>
        ) : (
          <form onSubmit={submit} aria-label="Accept the invitation">
            <Stack>
              <Title order={1} size="h2">
                Join an organisation
              </Title>
              <Text size="sm">
                {me
                  ? `You accept as ${me.email}.`
                  : "Choose a password (at least 12 characters) if the invitation created your account; otherwise give your own."}
              </Text>
              <Refusal problem={problem} title="The invitation was not accepted" />
              <PasswordInput
                label="Password"
                autoComplete="new-password"
                required={!me}
                {...form.bind("password")}
              />
              <TextInput
                label="Name (optional)"
                autoComplete="name"
                {...form.bind("display_name")}
              />
              <Button type="submit" loading={busy}>
                Accept the invitation
              </Button>
            </Stack>
          </form>
        )}
      </Paper>
    </Center>
  );
}
