import { Code, Text } from "@mantine/core";
import { diffLines } from "diff";

const text = (value: unknown) =>
  value === undefined || value === null ? "" : JSON.stringify(value, null, 2) + "\n";

/** A line diff of two JSON values, pretty-printed: '+' lines added, '-' lines removed. */
export function JsonDiff({ from, to, label }: { from: unknown; to: unknown; label: string }) {
  const parts = diffLines(text(from), text(to));
  if (!parts.some((part) => part.added || part.removed)) return <Text>No difference.</Text>;
  return (
    <Code block aria-label={label}>
      {parts.map((part, i) => (
        <span
          key={i}
          style={{ background: part.added ? "#d3f9d8" : part.removed ? "#ffe3e3" : undefined }}
        >
          {part.value
            .replace(/\n$/, "")
            .split("\n")
            .map((line) => `${part.added ? "+" : part.removed ? "-" : " "} ${line}`)
            .join("\n") + "\n"}
        </span>
      ))}
    </Code>
  );
}
