/**
 * The profile screen (SPEC "Profile screen"): side card and the tabs Profile, Settings,
 * Collections and Achievements. Settings holds a real form (display name, bio and default
 * engine, saved together by one PUT /api/profiles/me: all or nothing) and the account:
 * password, sessions, data export, deletion (`accounts/AccountSettings`). API keys
 * (`accounts/ApiKeys`) have a tab of their own, opened directly by `/profile#api-keys`.
 * Props (from the server): `{ user, initial, defaultAiModel, aiModels, hasPassword }`;
 * `aiModels` is what the server can use now plus the stored choice (marked when it is not).
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { getJson, putJson } from "../lib/api";
import { useToast } from "../lib/useToast";
import { serverMessage } from "../accounts/shared";
import { engineName } from "../identify/engines";
import { useModels, useSettings } from "../lib/query";
import { checkAchievements } from "../lib/achievements";
import { Collections } from "../accounts/Collections";
import { AccountSettings } from "../accounts/AccountSettings";
import { ApiKeys } from "../accounts/ApiKeys";
import type { ProfileProps } from "../generated/ProfileProps";
import type { ProfileResponse } from "../generated/ProfileResponse";

const PROFILE_KEY = ["/api/profiles/me"] as const;
const PREFS_KEY = ["/api/profiles/preferences"] as const;

const TABS = [
  ["profile", "Profile"],
  ["settings", "Settings"],
  ["collections", "Collections"],
  ["achievements", "Achievements"],
  ["api-keys", "API keys"],
] as const;
type TabKey = (typeof TABS)[number][0];

const ENGINE_IDS = ["auto", "google", "openai", "xai", "anthropic", "ensemble", "library"];

/** The tab a link asks for (`/profile#api-keys`), else the first. */
export function tabFromHash(hash: string): TabKey {
  const want = hash.replace(/^#/, "");
  return TABS.find(([key]) => key === want)?.[0] ?? "profile";
}

function memberSince(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "Unknown date" : d.toLocaleDateString(undefined, { year: "numeric", month: "long", day: "numeric" });
}

/** The Achievements tab: what was earned (with its date), then what can still be earned. */
function Achievements({ data }: { data: ProfileResponse }) {
  return (
    <>
      {data.achievements.length === 0 ? (
        <p className="profile-empty">No achievements yet</p>
      ) : (
        <ul className="achievement-list" data-testid="achievements-earned">
          {data.achievements.map((a) => (
            <li key={a.key} className="achievement achievement-earned">
              <span className="achievement-title">{a.title}</span>
              <span className="achievement-desc">{a.description}</span>
              <span className="achievement-date">
                Earned <time dateTime={a.earnedAt}>{memberSince(a.earnedAt)}</time>
              </span>
            </li>
          ))}
        </ul>
      )}
      {data.toEarn.length > 0 && (
        <>
          <h3 className="achievement-h">Still to earn</h3>
          <ul className="achievement-list" data-testid="achievements-locked">
            {data.toEarn.map((a) => (
              <li key={a.key} className="achievement achievement-locked">
                <span className="achievement-title">{a.title}</span>
                <span className="achievement-desc">{a.description}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

export default function Profile({ user, initial, defaultAiModel = "auto", aiModels = ENGINE_IDS, hasPassword = true }: ProfileProps) {
  const { toast } = useToast();
  const queryClient = useQueryClient();
  const settings = useSettings();
  const id = useId();
  const [tab, setTab] = useState<TabKey>(() => (typeof window === "undefined" ? "profile" : tabFromHash(window.location.hash)));
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  const { data } = useQuery({ queryKey: PROFILE_KEY, queryFn: () => getJson<ProfileResponse>("/api/profiles/me"), initialData: initial });
  const prefs = useQuery({
    queryKey: PREFS_KEY,
    queryFn: () => getJson<{ defaultAiModel: string }>("/api/profiles/preferences"),
    initialData: { defaultAiModel },
  });
  const models = useModels();
  // Achievements earned since the last check (an identification made through the API, say)
  // are announced here, and the tab shows them.
  useEffect(() => {
    void checkAchievements().then((earned) => {
      if (earned.length > 0) void queryClient.invalidateQueries({ queryKey: PROFILE_KEY });
    });
  }, [queryClient]);
  const p = data.profile;
  const [form, setForm] = useState({ displayName: p.displayName ?? "", bio: p.bio === "Movie enthusiast" ? "" : p.bio, model: prefs.data.defaultAiModel });
  const [saving, setSaving] = useState(false);
  const name = p.displayName || user.username;

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    try {
      const updated = await putJson<ProfileResponse>("/api/profiles/me", {
        displayName: form.displayName,
        bio: form.bio,
        defaultAiModel: form.model,
      });
      queryClient.setQueryData(PROFILE_KEY, updated);
      queryClient.setQueryData(PREFS_KEY, { defaultAiModel: form.model });
      toast({ title: "Profile updated", description: "Your changes have been saved." });
    } catch (err) {
      toast({ title: "Update failed", description: serverMessage(err, "Failed to save your profile."), variant: "destructive" });
    } finally {
      setSaving(false);
    }
  }

  function onTabKey(e: KeyboardEvent, index: number) {
    let next = index;
    if (e.key === "ArrowRight") next = (index + 1) % TABS.length;
    else if (e.key === "ArrowLeft") next = (index - 1 + TABS.length) % TABS.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = TABS.length - 1;
    else return;
    e.preventDefault();
    const key = TABS[next]![0];
    setTab(key);
    tabRefs.current[key]?.focus();
  }

  return (
    <div className="profile-layout" data-testid="profile">
      <aside className="profile-card" aria-label="Profile summary">
        {p.profilePicture ? (
          <img className="profile-avatar" src={p.profilePicture} alt="" width={96} height={96} referrerPolicy="no-referrer" />
        ) : (
          <div className="profile-avatar" aria-hidden="true">
            {user.username.charAt(0).toUpperCase()}
          </div>
        )}
        <h1 className="profile-name">{name}</h1>
        <p className="profile-bio">{p.bio}</p>
        <dl className="profile-stats">
          <div>
            <dt>Identifications</dt>
            <dd>{p.totalIdentifications}</dd>
          </div>
          <div>
            <dt>Achievements</dt>
            <dd>{data.achievements.length}</dd>
          </div>
        </dl>
      </aside>
      <div className="profile-main">
        <div className="profile-tabs" role="tablist" aria-label="Profile sections">
          {TABS.map(([key, label], i) => (
            <button
              key={key}
              ref={(el) => {
                tabRefs.current[key] = el;
              }}
              type="button"
              role="tab"
              id={`${id}-${key}-tab`}
              aria-selected={tab === key}
              aria-controls={`${id}-${key}-panel`}
              tabIndex={tab === key ? 0 : -1}
              className="profile-tab"
              onClick={() => setTab(key)}
              onKeyDown={(e) => onTabKey(e, i)}
            >
              {label}
            </button>
          ))}
        </div>
        <div className="profile-panel" role="tabpanel" id={`${id}-${tab}-panel`} aria-labelledby={`${id}-${tab}-tab`}>
          {tab === "profile" && (
            <dl className="profile-fields">
              <div>
                <dt>Username</dt>
                <dd>{user.username}</dd>
              </div>
              <div>
                <dt>Email</dt>
                <dd>{user.email}</dd>
              </div>
              <div>
                <dt>Member since</dt>
                <dd>{memberSince(user.createdAt)}</dd>
              </div>
            </dl>
          )}
          {tab === "settings" && (
            <>
              <section className="settings-section" aria-labelledby={`${id}-profile-h`}>
                <h3 id={`${id}-profile-h`}>Profile</h3>
                <form className="profile-form" onSubmit={save}>
                  <label htmlFor={`${id}-dn`}>Display name</label>
                  <input
                    id={`${id}-dn`}
                    value={form.displayName}
                    maxLength={50}
                    placeholder={user.username}
                    onChange={(e) => setForm({ ...form, displayName: e.target.value })}
                  />
                  <label htmlFor={`${id}-bio`}>Bio</label>
                  <textarea
                    id={`${id}-bio`}
                    value={form.bio}
                    maxLength={500}
                    rows={4}
                    placeholder="Movie enthusiast"
                    onChange={(e) => setForm({ ...form, bio: e.target.value })}
                  />
                  <label htmlFor={`${id}-engine`}>Default AI engine</label>
                  <select id={`${id}-engine`} value={form.model} onChange={(e) => setForm({ ...form, model: e.target.value })}>
                    {aiModels.map((m) => (
                      <option key={m} value={m}>
                        {engineName(m, settings.data)}
                        {m !== "auto" && models.data && !(models.data.available as Record<string, boolean>)[m] ? " (not available now)" : ""}
                      </option>
                    ))}
                  </select>
                  <button className="btn btn-primary" type="submit" disabled={saving}>
                    {saving ? "Saving..." : "Save Changes"}
                  </button>
                </form>
              </section>
              <AccountSettings hasPassword={hasPassword} username={user.username} email={user.email} />
            </>
          )}
          {tab === "collections" && <Collections />}
          {tab === "achievements" && <Achievements data={data} />}
          {tab === "api-keys" && <ApiKeys />}
        </div>
      </div>
    </div>
  );
}
