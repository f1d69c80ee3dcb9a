/**
 * The React half of the runtime, loaded only on pages that have an island: one shared
 * QueryClient for every island of the page, and each island rendered in its own root
 * inside the provider and the error boundary of SPEC "Layout".
 */
import { QueryClientProvider } from "@tanstack/react-query";
import { StrictMode, type ComponentType } from "react";
import { createRoot, type Root } from "react-dom/client";
import { ErrorBoundary } from "./lib/ErrorBoundary";
import { createQueryClient } from "./lib/query";

export const queryClient = createQueryClient();

const roots = new Map<HTMLElement, Root>();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function mount(el: HTMLElement, name: string, Island: ComponentType<any>, props: Record<string, unknown>): void {
  roots.get(el)?.unmount();
  const root = createRoot(el, { identifierPrefix: `${name}-` });
  roots.set(el, root);
  root.render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <ErrorBoundary source={`island:${name}`}>
          <Island {...props} />
        </ErrorBoundary>
      </QueryClientProvider>
    </StrictMode>,
  );
}

export function unmount(el: HTMLElement): void {
  roots.get(el)?.unmount();
  roots.delete(el);
}
