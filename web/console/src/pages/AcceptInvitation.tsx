import {
  Alert,
  Anchor,
  Button,
  Center,
  Paper,
  PasswordInput,
  SegmentedControl,
  Stack,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useState } from "react";
import type { FormEvent, ReactNode } from "react";
import { useNavigate } from "react-router";

import { ApiError, atFields, invitationToken } from "../api";
import { useAuth } from "../auth";

/** What the API's own checks ask of a new password (auth/service.py). */
const MIN_PASSWORD_LENGTH = 12;

type Account = "new" | "existing";

/** The page an invitation link opens (``/console/accept-invitation#token=...``). A person the
 * invitation created an account for chooses a password; one who already has an account
 * proves it with that account's password (the inviter saw the token: it is not enough on its
 * own). Either way the invitation's roles apply from then on, and the tab is signed in as
 * the invited account. */
export function AcceptInvitationPage() {
  const { me, acceptInvitation } = useAuth();
  const navigate = useNavigate();
  const [token] = useState(() => invitationToken(window.location.hash));
  const [account, setAccount] = useState<Account>("new");
  const [password, setPassword] = useState("");
  const [confirmation, setConfirmation] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (!token) {
    return (
      <Framed>
        <Alert color="red" role="alert" title="This invitation link is incomplete">
          Open the link exactly as you received it: its end (after <Text span>#token=</Text>) is the
          invitation itself.
        </Alert>
        <Anchor href="/console/">Go to the sign-in page</Anchor>
      </Framed>
    );
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (account === "new" && password !== confirmation) {
      setErrors({ "/confirmation": "The two passwords differ." });
      return;
    }
    setBusy(true);
    setErrors({});
    setFailure(null);
    try {
      await acceptInvitation(token!, password, account === "new" ? displayName.trim() : null);
      navigate("/environments", { replace: true });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        setFailure(
          account === "new"
            ? "This invitation is unknown, expired or already used. Ask the person who invited you for a new one. (If you already have a Portico account, choose “I have an account”.)"
            : "The invitation was refused: either the password is not that of the invited account, or the invitation is expired or already used.",
        );
      } else if (error instanceof ApiError) {
        setErrors(atFields(error.fieldErrors()));
        setFailure(error.message);
      } else {
        setFailure(error instanceof Error ? error.message : String(error));
      }
    } finally {
      setBusy(false);
    }
  }

  const shownFailure = Object.keys(errors).length > 0 ? null : failure;
  return (
    <Framed>
      <form onSubmit={submit} aria-label="Accept the invitation">
        <Stack>
          <Title order={2}>Join Portico</Title>
          <Text size="sm">
            You were invited to an organisation. Accepting signs you in with the roles the
            invitation gives.
          </Text>
          {me && (
            <Text size="sm" c="dimmed">
              This tab is signed in as {me.email}: accepting signs it in as the invited account
              instead.
            </Text>
          )}
          <SegmentedControl
            aria-label="Your account"
            fullWidth
            value={account}
            onChange={(value) => {
              setAccount(value as Account);
              setErrors({});
              setFailure(null);
            }}
            data={[
              { value: "new", label: "I am new to Portico" },
              { value: "existing", label: "I have an account" },
            ]}
          />
          {shownFailure && (
            <Alert color="red" role="alert" title="The invitation was not accepted">
              {shownFailure}
            </Alert>
          )}
          {account === "new" ? (
            <>
              <PasswordInput
                label="Choose a password"
                description={`At least ${MIN_PASSWORD_LENGTH} characters.`}
                autoComplete="new-password"
                required
                value={password}
                error={errors["/password"]}
                aria-invalid={errors["/password"] !== undefined}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
              <PasswordInput
                label="Repeat the password"
                autoComplete="new-password"
                required
                value={confirmation}
                error={errors["/confirmation"]}
                aria-invalid={errors["/confirmation"] !== undefined}
                onChange={(e) => setConfirmation(e.currentTarget.value)}
              />
              <TextInput
                label="Your name (optional)"
                autoComplete="name"
                value={displayName}
                error={errors["/displayName"]}
                onChange={(e) => setDisplayName(e.currentTarget.value)}
              />
            </>
          ) : (
            <PasswordInput
              label="Your password"
              description="The password of the account the invitation was sent to."
              autoComplete="current-password"
              required
              value={password}
              error={errors["/password"]}
              aria-invalid={errors["/password"] !== undefined}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
          )}
          <Button type="submit" loading={busy}>
            Accept the invitation
          </Button>
        </Stack>
      </form>
    </Framed>
  );
}

function Framed({ children }: { children: ReactNode }) {
  return (
    <Center mih="100vh">
      <Paper withBorder p="xl" w={440}>
        <Stack>{children}</Stack>
      </Paper>
    </Center>
  );
}
