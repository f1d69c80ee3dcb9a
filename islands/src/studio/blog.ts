/**
 * The blog studio's client side: the post shape `/api/admin/blog` speaks (its answers typed
 * by the Rust `AdminPost`, generated into src/generated/), the slug rule the
 * server applies to a blank slug (shown while the admin has not typed one), and the
 * conversions between the `datetime-local` input and UTC.
 */
import { ApiError, apiRequest, readJson } from "../lib/api";
import type { AdminPost } from "../generated/AdminPost";
import type { PostStatus } from "../generated/PostStatus";

/** The post as the server sends it: the Rust type `AdminPost`, generated. */
export type { AdminPost, PostStatus };

export interface PostInput {
  version?: number;
  title: string;
  slug: string;
  summary: string;
  content: string;
  category: string;
  tags: string[];
  authorName: string;
  featuredImage: string | null;
  metaTitle: string;
  metaDescription: string;
  socialImage: string | null;
  noindex: boolean;
  status: PostStatus;
  publishAt: string | null;
}

export interface StoredImage {
  id: number;
  url: string;
  width: number;
  height: number;
  srcset: string;
}

export interface Preview {
  html: string;
  readTimeMinutes: number;
  words: number;
}

/** Lower-case ASCII words joined by single hyphens, at most 160 characters. */
export function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 160)
    .replace(/-+$/, "");
}

/** `"a, b ,,c"` → `["a", "b", "c"]`. */
export function parseTags(text: string): string[] {
  return text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

/** An ISO time as the value of a `datetime-local` input, in the browser's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (browser time zone) as ISO UTC, or null when empty or invalid. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The server's `{error}` text of a failed call, else the error's own message. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const body = error.json<{ error?: string }>();
    if (body?.error) return body.error;
  }
  return error instanceof Error ? error.message : String(error);
}

export async function savePost(id: number | null, input: PostInput): Promise<AdminPost> {
  const res = id == null ? await apiRequest("POST", "/api/admin/blog", input) : await apiRequest("PUT", `/api/admin/blog/${id}`, input);
  return readJson<AdminPost>(res);
}

export async function previewMarkdown(content: string, signal?: AbortSignal): Promise<Preview> {
  const res = await apiRequest("POST", "/api/admin/blog/preview", { content }, { signal });
  return readJson<Preview>(res);
}

export async function uploadImage(file: File): Promise<StoredImage> {
  const body = new FormData();
  body.append("file", file);
  return readJson<StoredImage>(await apiRequest("POST", "/api/admin/blog/images", body));
}
