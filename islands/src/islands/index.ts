/**
 * Every island a page can mount, by the name templates use in `data-island="Name"`.
 * Each entry is a dynamic import, so each island is its own chunk, loaded only on pages
 * that mark it. An island module default-exports a React component taking its props
 * (the JSON of `data-props`), typed by `src/generated/<Name>Props.ts`: generated from the
 * Rust props struct the handler passes to `Island::new` (src/routes/island_types.rs), never
 * written by hand. An island whose every prop has a default takes `Partial<<Name>Props>`
 * (the runtime mounts it with no props when its `data-props` cannot be read).
 *
 * To add one: create `islands/src/islands/<Name>.tsx` and add one line below (keep the
 * list sorted to avoid merge conflicts). test/island-registry.test.ts fails when this list
 * and the folder differ, or when a template or a Rust `Island::new` names an island that is
 * not here (a missing entry leaves the page on its no-JavaScript fallback for good).
 */
import type { ComponentType } from "react";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type IslandModule = { default: ComponentType<any> };
export type IslandLoader = () => Promise<IslandModule>;

export const islands: Record<string, IslandLoader> = {
  AuthScreen: () => import("./AuthScreen"),
  BlogEditor: () => import("./BlogEditor"),
  Demo: () => import("./Demo"),
  History: () => import("./History"),
  Insight: () => import("./Insight"),
  PendingVerification: () => import("./PendingVerification"),
  Profile: () => import("./Profile"),
  PwaSettings: () => import("./PwaSettings"),
  RecentIdentifications: () => import("./RecentIdentifications"),
  TestPage: () => import("./TestPage"),
  Uploader: () => import("./Uploader"),
  VerifyEmail: () => import("./VerifyEmail"),
};
