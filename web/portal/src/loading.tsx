import { Alert, Loader } from "@mantine/core";
import { useCallback, useEffect, useState } from "react";
import type { ReactNode } from "react";

import { Problem } from "./api";

export interface Loaded<T> {
  value: T | undefined;
  failure: Error | undefined;
  /** ask again (after a change the page made, or to see new figures) */
  reload: () => void;
}

/** What ``load`` answers, asked again whenever ``key`` changes (the path and query it reads). */
export function useLoaded<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{
    key: string;
    value?: T;
    failure?: Error;
  }>({ key });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let wanted = true;
    load().then(
      (value) => wanted && setState({ key, value }), // a success clears a failure
      (failure: Error) => wanted && setState((was) => ({ ...was, key, failure })),
    );
    return () => {
      wanted = false;
    };
    // ``load`` is a new function at each render; ``key`` says what it reads
  }, [key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  // a value of another key is not shown under this one (a page left for another)
  const current = state.key === key;
  return {
    value: current ? state.value : undefined,
    failure: state.failure,
    reload,
  };
}

/** ``children(value)`` once it is there; until then a named loader, or what went wrong. */
export function Shown<T>(props: {
  loaded: Loaded<T>;
  what: string;
  children: (value: T) => ReactNode;
}) {
  const { value, failure } = props.loaded;
  if (value === undefined) {
    return failure ? (
      <Refusal problem={failure} />
    ) : (
      <Loader aria-label={`Loading ${props.what}`} />
    );
  }
  // a value asked again and refused: the last one stays, under what went wrong
  return (
    <>
      <Refusal problem={failure} />
      {props.children(value)}
    </>
  );
}

/** A refusal, announced to screen readers. */
export function Refusal({ problem, title }: { problem: Error | null | undefined; title?: string }) {
  if (!problem) return null;
  return (
    <Alert color="red" role="alert" title={title}>
      {problem.message}
    </Alert>
  );
}

/** A form's call: busy while it runs; the API's refusal kept (its message, and each field's
 * message by JSON pointer, shown at that field). */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Error | null>(null);
  const fieldError = (pointer: string) =>
    problem instanceof Problem ? problem.fields[pointer] : undefined;

  async function run(action: () => Promise<void>): Promise<boolean> {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      return true;
    } catch (error) {
      setProblem(error instanceof Error ? error : new Error(String(error)));
      return false;
    } finally {
      setBusy(false);
    }
  }

  return { busy, problem, fieldError, run };
}

/** A form's text fields: their values, and the props that bind each input to its value and to
 * the message the API gave for it (``/name``), said to assistive technology as invalid. */
export function useFields<T extends Record<string, string>>(
  initial: T,
  fieldError: (pointer: string) => string | undefined = () => undefined,
) {
  const [values, setValues] = useState(initial);
  const bind = (name: keyof T & string) => {
    const error = fieldError(`/${name}`);
    return {
      value: values[name],
      error,
      "aria-invalid": error !== undefined,
      onChange: (event: { currentTarget: { value: string } }) => {
        const value = event.currentTarget.value;
        setValues((was) => ({ ...was, [name]: value }));
      },
    };
  };
  return { values, bind, clear: () => setValues(initial) };
}
