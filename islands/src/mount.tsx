/**
 * The React half of the runtime, loaded only on pages that have an island: one shared
 * QueryClient for every island of the page, and each island rendered in its own root
 * inside the provider and the error boundary of SPEC "Layout".
 */
import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode, startTransition, type ComponentType } from "react";
import { flushSync } from "react-dom";
import { createRoot, type Root } from "react-dom/client";
import { ErrorBoundary } from "./lib/ErrorBoundary";
import { createQueryClient } from "./lib/query";

export const queryClient = createQueryClient();

const roots = new Map<HTMLElement, Root>();

/**
 * Renders an island into its mark. Normally in a transition: it renders in small slices that
 * yield to the browser, so mounting never blocks input for long. `sync` renders at once, for
 * an island taking over server HTML the visitor is using (nothing may change in between).
 */
export function mount(
  el: HTMLElement,
  name: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  Island: ComponentType<any>,
  props: Record<string, unknown>,
  { sync = false }: { sync?: boolean } = {},
): void {
  roots.get(el)?.unmount();
  const root = createRoot(el, { identifierPrefix: `${name}-` });
  roots.set(el, root);
  const tree = (
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <ErrorBoundary source={`island:${name}`}>
          <Island {...props} />
        </ErrorBoundary>
      </QueryClientProvider>
    </StrictMode>
  );
  if (sync) flushSync(() => root.render(tree));
  else startTransition(() => root.render(tree));
}

export function unmount(el: HTMLElement): void {
  roots.get(el)?.unmount();
  roots.delete(el);
}
