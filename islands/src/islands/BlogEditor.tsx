/**
 * The blog studio's editor (`/admin/blog/new`, `/admin/blog/{id}`): Markdown with a live
 * preview rendered by the server's own sanitiser, the post's fields, its picture, per-post
 * SEO with length hints, and its state (draft, scheduled, published). Every save sends the
 * version it loaded; a 409 says who changed the post meanwhile and keeps the text here.
 */
import { useEffect, useId, useRef, useState } from "react";
import { deleteJson } from "../lib/api";
import { toast } from "../lib/toast";
import type { BlogEditorProps } from "../generated/BlogEditorProps";
import {
  type AdminPost,
  type PostInput,
  type PostStatus,
  type StoredImage,
  errorText,
  fromLocalInput,
  parseTags,
  previewMarkdown,
  savePost,
  slugify,
  toLocalInput,
  uploadImage,
} from "../studio/blog";

interface Draft {
  title: string;
  slug: string;
  slugTouched: boolean;
  summary: string;
  content: string;
  category: string;
  tags: string;
  authorName: string;
  featuredImage: string | null;
  metaTitle: string;
  metaDescription: string;
  socialImage: string | null;
  noindex: boolean;
  status: PostStatus;
  publishAt: string;
}

function draftOf(p: AdminPost | null): Draft {
  return {
    title: p?.title ?? "",
    slug: p?.slug ?? "",
    // An existing post keeps its address when retitled.
    slugTouched: p != null,
    summary: p?.summary ?? "",
    content: p?.content ?? "",
    category: p?.category ?? "",
    tags: (p?.tags ?? []).join(", "),
    authorName: p?.authorName ?? "",
    featuredImage: p?.featuredImage ?? null,
    metaTitle: p?.metaTitle ?? "",
    metaDescription: p?.metaDescription ?? "",
    socialImage: p?.socialImage ?? null,
    noindex: p?.noindex ?? false,
    status: p?.status ?? "draft",
    publishAt: p?.status === "scheduled" ? toLocalInput(p.publishedAt) : "",
  };
}

/** "12 of about 60 characters", flagged when over. */
function LengthHint({ id, value, max, fallback }: { id: string; value: string; max: number; fallback: string }) {
  const n = [...(value || fallback)].length;
  const over = n > max;
  return (
    <p id={id} className={`field-hint muted ${over ? "is-over" : ""}`}>
      {value ? "" : "Empty: uses “" + (fallback.length > 60 ? fallback.slice(0, 57) + "…" : fallback) + "”. "}
      {n} of about {max} characters{over ? " — search engines will cut it" : ""}
    </p>
  );
}

function ImageField({
  label,
  value,
  onChange,
  maxMb,
  hint,
}: {
  label: string;
  value: string | null;
  onChange: (url: string | null) => void;
  maxMb: number;
  hint: string;
}) {
  const id = useId();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const pick = async (file: File | undefined) => {
    if (!file) return;
    setProblem(null);
    if (file.size > maxMb * 1024 * 1024) {
      setProblem(`Image too large. Maximum size is ${maxMb} MB.`);
      return;
    }
    setBusy(true);
    try {
      const img: StoredImage = await uploadImage(file);
      onChange(img.url);
    } catch (e) {
      setProblem(errorText(e));
    } finally {
      setBusy(false);
      if (input.current) input.current.value = "";
    }
  };
  return (
    <div className="studio-image-field">
      <label htmlFor={id}>{label}</label>
      {value ? <img className="studio-image-preview" src={value} alt={`${label}: current picture`} width={320} height={180} /> : null}
      <input
        ref={input}
        id={id}
        type="file"
        accept="image/jpeg,image/png,image/webp,image/gif"
        disabled={busy}
        aria-describedby={`${id}-hint`}
        onChange={(e) => void pick(e.target.files?.[0])}
      />
      <p id={`${id}-hint`} className="field-hint muted">
        {busy ? "Uploading and re-encoding…" : hint}
      </p>
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
      {value ? (
        <button type="button" className="btn btn-secondary btn-small" onClick={() => onChange(null)}>
          Remove {label.toLowerCase()}
        </button>
      ) : null}
    </div>
  );
}

export default function BlogEditor(props: BlogEditorProps) {
  const [post, setPost] = useState<AdminPost | null>(props.post);
  const [d, setD] = useState<Draft>(() => draftOf(props.post));
  const [dirty, setDirty] = useState(false);
  const [saving, setSaving] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [conflict, setConflict] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ html: string; minutes: number; words: number } | null>(null);
  const ids = {
    title: useId(),
    slug: useId(),
    summary: useId(),
    category: useId(),
    categories: useId(),
    tags: useId(),
    author: useId(),
    content: useId(),
    metaTitle: useId(),
    metaDescription: useId(),
    publishAt: useId(),
  };

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    setD((old) => ({ ...old, [key]: value }));
    setDirty(true);
  };
  const slug = d.slugTouched ? d.slug : slugify(d.title);

  // Live preview: the server renders and sanitises exactly as the article page does.
  useEffect(() => {
    const ctrl = new AbortController();
    const t = window.setTimeout(() => {
      previewMarkdown(d.content, ctrl.signal)
        .then((p) => setPreview({ html: p.html, minutes: p.readTimeMinutes, words: p.words }))
        .catch(() => {});
    }, 300);
    return () => {
      window.clearTimeout(t);
      ctrl.abort();
    };
  }, [d.content]);

  // Leaving with unsaved changes asks first.
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  const input = (status: PostStatus): PostInput => ({
    version: post?.version,
    title: d.title,
    slug: d.slugTouched ? d.slug : "",
    summary: d.summary,
    content: d.content,
    category: d.category,
    tags: parseTags(d.tags),
    authorName: d.authorName,
    featuredImage: d.featuredImage,
    metaTitle: d.metaTitle,
    metaDescription: d.metaDescription,
    socialImage: d.socialImage,
    noindex: d.noindex,
    status,
    publishAt: status === "scheduled" ? fromLocalInput(d.publishAt) : null,
  });

  /** Saves with `status`; the saved post, or null when refused (the reason is shown). */
  const save = async (status: PostStatus): Promise<AdminPost | null> => {
    if (!d.title.trim()) {
      setProblem("Title required - Please give the post a title");
      return null;
    }
    setSaving(true);
    setProblem(null);
    try {
      const saved = await savePost(post?.id ?? null, input(status));
      setPost(saved);
      setD((old) => ({ ...old, slug: saved.slug, slugTouched: true, status: saved.status }));
      setDirty(false);
      setConflict(null);
      if (!post) window.history.replaceState(null, "", `/admin/blog/${saved.id}`);
      const said =
        saved.status === "published" ? "Published" : saved.status === "scheduled" ? "Scheduled" : "Draft saved";
      toast({ title: said, description: saved.status === "draft" ? "Visitors cannot see it." : saved.url });
      return saved;
    } catch (e) {
      const msg = errorText(e);
      if (e && typeof e === "object" && "status" in e && (e as { status: number }).status === 409) setConflict(msg);
      else setProblem(msg);
      return null;
    } finally {
      setSaving(false);
    }
  };

  const openPreview = async () => {
    const saved = dirty || !post ? await save(d.status === "published" && !post ? "draft" : d.status) : post;
    if (saved) window.location.assign(`/admin/blog/${saved.id}/preview`);
  };

  const remove = async () => {
    if (!post) return;
    if (!window.confirm(`Delete “${post.title}”? This cannot be undone; its address will answer 404.`)) return;
    try {
      await deleteJson(`/api/admin/blog/${post.id}`);
      setDirty(false);
      window.location.assign("/admin/blog");
    } catch (e) {
      setProblem(errorText(e));
    }
  };

  const liveStatus = post?.status ?? "draft";
  const metaTitleFallback = `${d.title || "Title"} | ${props.siteName}`;
  const metaDescriptionFallback = d.summary || (preview ? preview.html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim().slice(0, 160) : "");

  return (
    <form
      className="studio-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save(d.status);
      }}
      aria-busy={saving}
    >
      {conflict ? (
        <div className="auth-alert admin-error" role="alert">
          <p>{conflict}</p>
          <p>
            <a href={post ? `/admin/blog/${post.id}` : "/admin/blog"} target="_blank" rel="noopener">
              Open the current version in a new tab
            </a>
          </p>
        </div>
      ) : null}
      {problem ? (
        <p className="auth-alert admin-error" role="alert">
          {problem}
        </p>
      ) : null}
      <div className="studio-status-bar">
        <span className={`post-state state-${liveStatus}`}>{liveStatus}</span>
        {post?.publishedAt && liveStatus !== "draft" ? (
          <span className="muted">
            {liveStatus === "scheduled" ? "goes live " : "published "}
            {new Date(post.publishedAt).toLocaleString()}
          </span>
        ) : null}
        {post?.updatedBy ? (
          <span className="muted">
            last saved by {post.updatedBy}, version {post.version}
          </span>
        ) : null}
        {dirty ? <span className="muted">unsaved changes</span> : null}
      </div>

      <div className="studio-columns">
        <div className="studio-fields">
          <label htmlFor={ids.title}>Title</label>
          <input id={ids.title} value={d.title} maxLength={200} required onChange={(e) => set("title", e.target.value)} />

          <label htmlFor={ids.slug}>Slug</label>
          <div className="studio-slug">
            <span className="muted" aria-hidden="true">
              /blog/
            </span>
            <input
              id={ids.slug}
              value={slug}
              maxLength={160}
              pattern="[a-z0-9]+(-[a-z0-9]+)*"
              aria-describedby={`${ids.slug}-hint`}
              onChange={(e) => {
                setD((old) => ({ ...old, slug: e.target.value, slugTouched: true }));
                setDirty(true);
              }}
            />
          </div>
          <p id={`${ids.slug}-hint`} className="field-hint muted">
            {d.slugTouched
              ? liveStatus === "published"
                ? "Changing it keeps the old address working: it redirects here."
                : "Lower-case letters, digits and hyphens."
              : "Made from the title; edit it to choose your own."}
          </p>

          <label htmlFor={ids.summary}>Summary</label>
          <textarea id={ids.summary} rows={2} maxLength={500} value={d.summary} onChange={(e) => set("summary", e.target.value)} />

          <div className="studio-row">
            <div>
              <label htmlFor={ids.category}>Category</label>
              <input id={ids.category} list={ids.categories} value={d.category} maxLength={64} onChange={(e) => set("category", e.target.value)} />
              <datalist id={ids.categories}>
                {props.categories.map((c) => (
                  <option key={c} value={c} />
                ))}
              </datalist>
            </div>
            <div>
              <label htmlFor={ids.author}>Author</label>
              <input id={ids.author} value={d.authorName} maxLength={100} placeholder={props.defaultAuthor} onChange={(e) => set("authorName", e.target.value)} />
            </div>
          </div>
          <label htmlFor={ids.tags}>Tags (comma-separated)</label>
          <input id={ids.tags} value={d.tags} onChange={(e) => set("tags", e.target.value)} />

          <ImageField
            label="Featured image"
            value={d.featuredImage}
            onChange={(u) => set("featuredImage", u)}
            maxMb={props.maxImageMb}
            hint={`JPEG, PNG, WebP or GIF up to ${props.maxImageMb} MB. It is re-encoded in several sizes; its metadata (camera, location) is removed.`}
          />

          <label htmlFor={ids.content}>Article (Markdown)</label>
          <textarea
            id={ids.content}
            className="studio-markdown"
            rows={18}
            value={d.content}
            spellCheck
            aria-describedby={`${ids.content}-hint`}
            onChange={(e) => set("content", e.target.value)}
          />
          <p id={`${ids.content}-hint`} className="field-hint muted">
            {preview ? `${preview.words} words · ${preview.minutes} min read` : "…"} · ## heading, **bold**, [link](https://…), - list
          </p>
        </div>

        <section className="studio-preview" aria-labelledby="studio-preview-title">
          <h2 id="studio-preview-title" className="h4">
            Live preview
          </h2>
          <article className="prose" aria-live="off" dangerouslySetInnerHTML={{ __html: preview?.html ?? "" }} />
        </section>
      </div>

      <fieldset className="studio-seo">
        <legend>Search and social</legend>
        <div className="snippet" aria-label="How a search result could show it">
          <p className="snippet-url">
            {props.origin}/blog/{slug || "…"}
          </p>
          <p className="snippet-title">{d.metaTitle || metaTitleFallback}</p>
          <p className="snippet-description">{d.metaDescription || metaDescriptionFallback || "No description yet."}</p>
        </div>
        <label htmlFor={ids.metaTitle}>Meta title</label>
        <input id={ids.metaTitle} value={d.metaTitle} maxLength={200} aria-describedby={`${ids.metaTitle}-hint`} onChange={(e) => set("metaTitle", e.target.value)} />
        <LengthHint id={`${ids.metaTitle}-hint`} value={d.metaTitle} max={props.titleMax} fallback={metaTitleFallback} />
        <label htmlFor={ids.metaDescription}>Meta description</label>
        <textarea
          id={ids.metaDescription}
          rows={2}
          maxLength={400}
          value={d.metaDescription}
          aria-describedby={`${ids.metaDescription}-hint`}
          onChange={(e) => set("metaDescription", e.target.value)}
        />
        <LengthHint id={`${ids.metaDescription}-hint`} value={d.metaDescription} max={props.descriptionMax} fallback={metaDescriptionFallback} />
        <ImageField
          label="Social image"
          value={d.socialImage}
          onChange={(u) => set("socialImage", u)}
          maxMb={props.maxImageMb}
          hint="Shown when the post is shared; empty uses the featured image, then the site's default. Best at 1200×630."
        />
        <label className="studio-check">
          <input type="checkbox" checked={d.noindex} onChange={(e) => set("noindex", e.target.checked)} /> Hide from search engines (noindex; left out of the
          sitemap)
        </label>
      </fieldset>

      <fieldset className="studio-publish">
        <legend>Publishing</legend>
        <div className="check-row" role="radiogroup" aria-label="Status">
          {(["draft", "published", "scheduled"] as PostStatus[]).map((s) => (
            <label key={s}>
              <input type="radio" name="status" value={s} checked={d.status === s} onChange={() => set("status", s)} />{" "}
              {s === "draft" ? "Draft (only admins see it)" : s === "published" ? "Published" : "Scheduled"}
            </label>
          ))}
        </div>
        {d.status === "scheduled" ? (
          <>
            <label htmlFor={ids.publishAt}>Publish at (your time zone)</label>
            <input id={ids.publishAt} type="datetime-local" value={d.publishAt} required onChange={(e) => set("publishAt", e.target.value)} />
          </>
        ) : null}
        <div className="studio-actions">
          <button className="btn btn-primary" type="submit" disabled={saving}>
            {saving ? "Saving…" : d.status === "published" ? (liveStatus === "published" ? "Update" : "Publish") : d.status === "scheduled" ? "Schedule" : "Save draft"}
          </button>
          <button className="btn btn-secondary" type="button" disabled={saving} onClick={() => void openPreview()}>
            Preview
          </button>
          {post && liveStatus === "published" ? (
            <a className="btn btn-secondary" href={post.url}>
              View on the blog
            </a>
          ) : null}
          {post ? (
            <button className="btn btn-danger" type="button" disabled={saving} onClick={() => void remove()}>
              Delete
            </button>
          ) : null}
        </div>
      </fieldset>
    </form>
  );
}
