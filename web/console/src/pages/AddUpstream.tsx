import {
  ActionIcon,
  Button,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Stepper,
  Switch,
  Text,
  TextInput,
} from "@mantine/core";
import { useState } from "react";

import { post } from "../api";
import { useAuth } from "../auth";
import type { Environment } from "./Environments";
import { Failure, useSubmission } from "../useSubmission";
import type { UpstreamNode } from "./Upstreams";

const BALANCING = [
  { value: "roundrobin", label: "Round robin" },
  { value: "least_conn", label: "Least connections" },
  { value: "ewma", label: "Lowest latency (EWMA)" },
  { value: "chash", label: "Consistent hash" },
];

const DISCOVERY_TYPES = [{ value: "dns", label: "DNS (A/AAAA or SRV records)" }];

/**
 * The seed's wizard: Overview (Name and Environment required before Next), Targets (at least
 * one node before Next; the Service discovery toggle hides manual node entry: the nodes then
 * come from discovery at run time, and Next waits for the discovery type and the service
 * name instead), Health checks, then create.
 */
export function AddUpstream(props: {
  opened: boolean;
  environments: Environment[];
  onClose: () => void;
  onAdded: (environmentId: string) => void;
}) {
  const { org } = useAuth();
  const [step, setStep] = useState(0);
  const [name, setName] = useState("");
  const [envId, setEnvId] = useState<string | null>(null);
  const [discovery, setDiscovery] = useState(false);
  const [discoveryType, setDiscoveryType] = useState("dns");
  const [serviceName, setServiceName] = useState("");
  const [nodes, setNodes] = useState<UpstreamNode[]>([]);
  const [host, setHost] = useState("");
  const [port, setPort] = useState<number | string>(80);
  const [weight, setWeight] = useState<number | string>(1);
  const [balancing, setBalancing] = useState("roundrobin");
  const [active, setActive] = useState(false);
  const [httpPath, setHttpPath] = useState("/");
  const [passive, setPassive] = useState(false);
  const { errors, failure, busy, submit } = useSubmission();

  const overviewDone = name.trim() !== "" && envId !== null;
  const targetsDone = discovery ? serviceName.trim() !== "" : nodes.length > 0;

  function reset() {
    setStep(0);
    setName("");
    setEnvId(null);
    setDiscovery(false);
    setServiceName("");
    setNodes([]);
  }

  function addNode() {
    const portNumber = Number(port);
    if (!host.trim() || !Number.isInteger(portNumber)) return;
    setNodes([...nodes, { host: host.trim(), port: portNumber, weight: Number(weight) || 0 }]);
    setHost("");
  }

  async function create() {
    const specification: Record<string, unknown> = discovery
      ? { type: balancing, discovery: { type: discoveryType, serviceName: serviceName.trim() } }
      : { type: balancing, nodes };
    const checks: Record<string, unknown> = {};
    if (active) checks.active = { type: "http", http_path: httpPath };
    if (passive) checks.passive = { type: "http" };
    if (active || passive) specification.checks = checks;
    await submit(async () => {
      await post(`/api/orgs/${org!.id}/envs/${envId}/upstreams`, {
        name: name.trim(),
        specification,
      });
      const created = envId!;
      reset();
      props.onAdded(created);
    });
  }

  return (
    <Modal opened={props.opened} onClose={props.onClose} title="Add Upstream" size="lg">
      <Stepper active={step} onStepClick={setStep} allowNextStepsSelect={false}>
        <Stepper.Step label="Overview">
          <Stack>
            <TextInput
              label="Name"
              required
              value={name}
              error={errors["/name"]}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Select
              label="Environment"
              required
              data={props.environments.map((e) => ({ value: e.id, label: e.name }))}
              value={envId}
              onChange={setEnvId}
            />
          </Stack>
        </Stepper.Step>
        <Stepper.Step label="Targets">
          <Stack>
            <Switch
              label="Service discovery"
              checked={discovery}
              onChange={(e) => setDiscovery(e.currentTarget.checked)}
            />
            {discovery ? (
              <>
                <Text c="dimmed">
                  The gateways find the nodes at run time, and again whenever the records'
                  time-to-live runs out; enter nodes by hand with service discovery off.
                </Text>
                <Select
                  label="Discovery type"
                  data={DISCOVERY_TYPES}
                  value={discoveryType}
                  onChange={(v) => v && setDiscoveryType(v)}
                  allowDeselect={false}
                  error={errors["/specification/discovery/type"]}
                />
                <TextInput
                  label="Service name"
                  required
                  description="name:port for A/AAAA records (orders.internal:8080), or an SRV name whose records give the ports (_http._tcp.orders.internal)"
                  value={serviceName}
                  error={errors["/specification/discovery/serviceName"]}
                  onChange={(e) => setServiceName(e.currentTarget.value)}
                />
              </>
            ) : (
              <>
                <Group align="end">
                  <TextInput
                    label="Host"
                    value={host}
                    onChange={(e) => setHost(e.currentTarget.value)}
                  />
                  <NumberInput
                    label="Port"
                    min={1}
                    max={65535}
                    value={port}
                    onChange={setPort}
                    w={110}
                  />
                  <NumberInput
                    label="Weight"
                    min={0}
                    max={65535}
                    value={weight}
                    onChange={setWeight}
                    w={100}
                  />
                  <Button variant="light" onClick={addNode}>
                    Add node
                  </Button>
                </Group>
                {nodes.length === 0 && <Text c="dimmed">At least one node is needed.</Text>}
                {nodes.map((node, i) => (
                  <Group key={`${node.host}:${node.port}:${i}`}>
                    <Text>
                      {node.host}:{node.port} (weight {node.weight})
                    </Text>
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Remove ${node.host}:${node.port}`}
                      onClick={() => setNodes(nodes.filter((_, j) => j !== i))}
                    >
                      ×
                    </ActionIcon>
                  </Group>
                ))}
                {errors["/specification/nodes"] && (
                  <Text c="red">{errors["/specification/nodes"]}</Text>
                )}
              </>
            )}
            <Select
              label="Load balancing"
              data={BALANCING}
              value={balancing}
              onChange={(v) => v && setBalancing(v)}
              allowDeselect={false}
            />
          </Stack>
        </Stepper.Step>
        <Stepper.Step label="Health checks">
          <Stack>
            <Checkbox
              label="Active checks (the gateway polls each node)"
              checked={active}
              onChange={(e) => setActive(e.currentTarget.checked)}
            />
            {active && (
              <TextInput
                label="Probe path"
                value={httpPath}
                error={errors["/specification/checks/active/http_path"]}
                onChange={(e) => setHttpPath(e.currentTarget.value)}
              />
            )}
            <Checkbox
              label="Passive checks (live traffic's errors mark nodes unhealthy)"
              checked={passive}
              onChange={(e) => setPassive(e.currentTarget.checked)}
            />
            <Failure message={failure} />
          </Stack>
        </Stepper.Step>
      </Stepper>
      <Group justify="flex-end" mt="lg">
        {step > 0 && (
          <Button variant="default" onClick={() => setStep(step - 1)}>
            Back
          </Button>
        )}
        {step < 2 ? (
          <Button
            onClick={() => setStep(step + 1)}
            disabled={(step === 0 && !overviewDone) || (step === 1 && !targetsDone)}
          >
            Next
          </Button>
        ) : (
          <Button onClick={create} loading={busy}>
            Create upstream
          </Button>
        )}
      </Group>
    </Modal>
  );
}
