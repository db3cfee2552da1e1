import {
  Alert,
  Button,
  Code,
  Group,
  Loader,
  Modal,
  PasswordInput,
  Stack,
  Text,
  Textarea,
  Title,
} from "@mantine/core";
import { useCallback, useEffect, useState } from "react";
import type { FormEvent } from "react";

import { ApiError, admin, adminSignIn, adminSignedIn } from "../api";
import { useAuth } from "../auth";
import { DataTable } from "../components/DataTable";
import { Failure, useSubmission } from "../useSubmission";

/** A registration waiting for approval, as the admin API lists it. */
export interface Registration {
  id: string;
  email: string;
  display_name: string;
  created_at: string;
}

const PENDING = "/users/pending?limit=100";

/** Why the admin API did not let the console in, in words for the person who asked. */
function refusal(error: unknown, email: string): string {
  if (error instanceof ApiError) {
    if (error.problem.type === "/problems/token-issuance-disabled")
      return "The admin API signs no one in yet: token issuance is off until an operator runs `portico admin-api set-web-api-key` on the server.";
    if (error.status === 401) return `That is not the password of ${email}.`;
    if (error.status === 403)
      return `${email} may not approve registrations: that takes the admin API's “administer users” permission (${error.message}).`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Developers who registered on the portal and wait for an administrator: approved (they
 * are emailed and may sign in) or rejected with a reason, through the marketplace admin API,
 * which the console signs in to separately (its tokens are not the management API's). */
export function RegistrationsPage() {
  const { me } = useAuth();
  const [signedIn, setSignedIn] = useState(adminSignedIn);
  return (
    <Stack>
      <Title order={2}>Portal registrations</Title>
      <Text size="sm" c="dimmed">
        Developers who registered on the developer portal wait here until an administrator approves
        them.
      </Text>
      {signedIn ? (
        <Pending email={me!.email} onSignedOut={() => setSignedIn(false)} />
      ) : (
        <AdminSignIn email={me!.email} onSignedIn={() => setSignedIn(true)} />
      )}
    </Stack>
  );
}

/** The admin API's own sign-in, with the console user's email and password. */
function AdminSignIn({ email, onSignedIn }: { email: string; onSignedIn: () => void }) {
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await adminSignIn(email, password);
      onSignedIn();
    } catch (error) {
      setProblem(refusal(error, email));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} aria-label="Sign in to the admin API">
      <Stack maw={420}>
        <Text size="sm">
          Registrations are approved through the marketplace admin API, which signs you in on its
          own: give the password of {email} once for this tab.
        </Text>
        {problem && (
          <Alert color="yellow" role="alert" title="The admin API did not sign you in">
            {problem.split("`").map((part, i) => (i % 2 ? <Code key={i}>{part}</Code> : part))}
          </Alert>
        )}
        <PasswordInput
          label="Password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        <Group>
          <Button type="submit" loading={busy}>
            Sign in to the admin API
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

function Pending({ email, onSignedOut }: { email: string; onSignedOut: () => void }) {
  const [found, setFound] = useState<Registration[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [rejecting, setRejecting] = useState<Registration | null>(null);
  const approving = useSubmission();

  const load = useCallback(() => {
    admin<{ data: Registration[] }>("GET", PENDING)
      .then(({ data }) => {
        setFound(data);
        setProblem(null);
      })
      .catch((error: unknown) => {
        if (!adminSignedIn())
          onSignedOut(); // its session ended: sign in again
        else setProblem(refusal(error, email));
      });
  }, [email, onSignedOut]);
  useEffect(load, [load]);

  const decided = (message: string) => {
    setDone(message);
    setRejecting(null);
    load();
  };

  if (problem)
    return (
      <Alert color="red" role="alert">
        {problem}
      </Alert>
    );
  if (!found) return <Loader aria-label="Loading the registrations" />;
  return (
    <Stack>
      {done && (
        <Alert color="green" role="status">
          {done}
        </Alert>
      )}
      <Failure message={approving.failure} />
      <DataTable
        items={found}
        label="Registrations awaiting approval"
        empty="No registration awaits approval."
        columns={["Email", "Name", "Registered", ""]}
        rowKey={(r) => r.id}
        row={(r) => [
          r.email,
          r.display_name,
          new Date(r.created_at).toLocaleString(),
          <Group gap={4} wrap="nowrap">
            <Button
              size="xs"
              variant="light"
              aria-label={`Approve ${r.email}`}
              loading={approving.busy}
              onClick={() =>
                void approving.submit(async () => {
                  await admin("POST", `/users/${r.id}/approve`);
                  decided(`${r.email} is approved: they are emailed and may sign in.`);
                })
              }
            >
              Approve
            </Button>
            <Button
              size="xs"
              variant="subtle"
              color="red"
              aria-label={`Reject ${r.email}`}
              onClick={() => setRejecting(r)}
            >
              Reject
            </Button>
          </Group>,
        ]}
      />
      {rejecting && (
        <Reject
          registration={rejecting}
          onClose={() => setRejecting(null)}
          onRejected={() => decided(`${rejecting.email} is rejected; the reason is kept.`)}
        />
      )}
    </Stack>
  );
}

function Reject(props: {
  registration: Registration;
  onClose: () => void;
  onRejected: () => void;
}) {
  const [reason, setReason] = useState("");
  const { errors, failure, busy, submit } = useSubmission();
  const title = `Reject ${props.registration.email}`;
  return (
    <Modal opened onClose={props.onClose} title={title}>
      <form
        aria-label={title}
        onSubmit={(event) => {
          event.preventDefault();
          void submit(async () => {
            await admin("POST", `/users/${props.registration.id}/reject`, { reason });
            props.onRejected();
          });
        }}
      >
        <Stack>
          <Failure message={Object.keys(errors).length > 0 ? null : failure} />
          <Textarea
            label="Reason"
            description="Kept on the account."
            required
            value={reason}
            error={errors["/reason"]}
            onChange={(e) => setReason(e.currentTarget.value)}
          />
          <Button type="submit" color="red" loading={busy}>
            Reject registration
          </Button>
        </Stack>
      </form>
    </Modal>
  );
}
