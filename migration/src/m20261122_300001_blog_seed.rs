//! The articles a fresh site starts with, so the blog is useful on day one.
//! Operators may edit or delete them; this migration only inserts slugs that are missing.
use chrono::{TimeZone, Utc};
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum BlogPosts {
    Table,
    Slug,
    Title,
    Summary,
    Content,
    Category,
    Tags,
    Published,
    CreatedAt,
    UpdatedAt,
}

struct Seed {
    slug: &'static str,
    title: &'static str,
    summary: &'static str,
    category: &'static str,
    tags: &'static str,
    /// (year, month, day) of publication.
    date: (i32, u32, u32),
    content: &'static str,
}

const SEEDS: &[Seed] = &[
    Seed {
        slug: "how-to-take-a-screenshot-that-gets-identified",
        title: "How to Take a Screenshot That Gets Identified",
        summary: "Five habits that turn a blurry frame into a confident match: pick the right moment, keep the frame clean and upload the original file.",
        category: "Guides",
        tags: "screenshots,tips,getting-started",
        date: (2026, 10, 6),
        content: r#"Most failed identifications are not hard scenes. They are hard *pictures* of easy scenes. A few habits make the difference between "no idea" and a match with the cast, the trailer and where to stream it.

## 1. Pause on a face, not on a transition

An engine recognises a scene from what is in it: actors, sets, costumes, on-screen text. A frame in the middle of a cross-fade or a whip pan carries half of two shots and all of neither. Step forward a few frames until the picture settles, ideally on a medium shot where a face is clearly lit.

## 2. Capture the screen, don't photograph it

A screenshot straight from the player is sharp, correctly coloured and free of reflections. A phone photo of a TV adds moiré patterns, glare, a tilted frame and your living room lamp. When you have to photograph a screen:

- turn off the room lights and stand square to the screen,
- fill the frame with the picture and nothing else,
- hold still, or rest the phone on something.

## 3. Keep the player interface out of the way

Subtitles are fine (they can even help), but a paused-video overlay, a progress bar or a big play button covers exactly the part of the frame an engine wants to read. Let the controls fade out before you capture.

## 4. Upload the original, not a forwarded copy

Every time an image goes through a messaging app it is shrunk and recompressed. Detail that a person barely notices, like the texture of a costume or text on a sign, is what gets lost. Upload the file you captured, in JPG, PNG or WebP. The maximum file size is set by the site's administrator (10 MB out of the box) and the upload panel tells you the current limit before you start.

## 5. One moment per upload

A collage of four frames looks helpful but gives each frame a quarter of the resolution. Upload your single best frame. If the scene really needs motion or sound to be recognisable, upload a short clip instead; our article on choosing between a screenshot and a clip explains when that pays off.

## A quick checklist

1. Paused on a steady, well-lit shot with a face or a distinctive place.
2. Captured from the device, not photographed.
3. No player controls over the picture.
4. The original file, within the size limit.

Follow those four and most scenes come back in seconds.
"#,
    },
    Seed {
        slug: "how-ai-engines-identify-a-scene",
        title: "How the AI Engines Identify a Scene",
        summary: "What actually happens between your upload and the answer: visual analysis by several AI providers, a catalogue lookup, and an honest confidence score.",
        category: "Technology",
        tags: "ai,engines,how-it-works",
        date: (2026, 10, 13),
        content: r#"When you press **Identify Now**, your file goes through three stages. Knowing them helps you read the result, and helps you pick an engine.

## Stage 1: looking at the picture

Each cloud engine is a large multimodal model from a different provider: Google Gemini, OpenAI GPT, xAI Grok and Anthropic Claude. We send the image (or a handful of key frames from a clip) and ask one precise question: which film or series is this, and how sure are you?

The models notice the same things a film buff would: a recognisable actor, a famous location, the colour grade of a particular director, a logo on a police car, a line of dialogue in the subtitles. They differ in strengths. Some are quicker, some read on-screen text better, some are more careful about saying "I am not sure". The About page lists the engines this site has enabled and what each one is good at.

## Stage 2: pinning the answer to a real title

A model answers in words, and words are ambiguous. "The Office" is two different shows; a remake shares its title with the original. So the candidate answer is resolved against a movie and TV catalogue, using the year, the cast and the type (film or series) the model gave us. Only a title that exists in the catalogue becomes a result. That is also where the poster, cast list, trailer and streaming availability come from.

## Stage 3: deciding how sure we are

Every result carries a confidence score, shown as a match percentage. It combines what the engine said about its own certainty with how well the catalogue entry agrees with it. A 95% match on a famous scene is common. A 60% match means "plausible, check the poster and the cast". We would rather show a lower score than pretend.

## Auto and Ensemble

- **Auto** picks the best engine that is available right now, based on the site's configuration.
- **Ensemble** asks every available engine at the same time and lets them vote. It is slower and uses more of the site's quota, but when engines disagree you get the answer most of them agree on, not just the first one back.

## What engines cannot do

They have not seen everything. Very new releases, obscure regional television and scenes with no people or landmarks are hard for any model. For those cases a site can index its own videos with the Library engine, which compares the actual pixels rather than asking a model to recognise them.
"#,
    },
    Seed {
        slug: "library-engine-finds-the-exact-second",
        title: "How the Library Engine Finds the Exact Second",
        summary: "The offline engine compares your screenshot with fingerprints of videos the site has indexed, and answers with the title, the episode and the timestamp.",
        category: "Technology",
        tags: "library,fingerprints,offline,how-it-works",
        date: (2026, 10, 20),
        content: r#"Cloud engines recognise a scene the way a person does: "that looks like a scene from a heist movie with this actor". The Library engine works differently. It does not guess. It *matches*, and because it matches against the actual video, it can tell you the exact episode and the second within it.

## Indexing: a fingerprint for every moment

The site's operator points the Library engine at video files they own, for example with `reelfind library add /path/to/videos`. For each file the engine walks through the frames and stores a compact **perceptual fingerprint** of each one: a short code that describes the picture's overall structure of light and dark areas rather than its exact pixels. For clips with sound it can also store fingerprints of the audio.

Perceptual fingerprints have a useful property: two pictures that look the same to a person have nearly the same code, even when one has been resized, recompressed, slightly cropped or colour-shifted. That is exactly what happens to a screenshot on its way from a TV to an upload.

## Searching: nearest neighbours

When you upload a screenshot, the engine computes the same kind of fingerprint from it and looks for the stored fingerprints that are closest. Because every stored fingerprint remembers which file and which timestamp it came from, the best match answers three questions at once: which title, which episode, and when.

A clip is even easier. Several frames in a row, plus optionally the sound, must all line up with consecutive moments of the same video. A chance resemblance of one frame cannot survive that test.

## Why it matters

- **It works offline.** No API key, no cloud provider, nothing leaves the server.
- **It is exact.** A cloud model can say "season 2 of this show". The Library engine can say "season 2, episode 5, at 14:32".
- **It is honest about its limits.** It only knows what has been indexed. A scene from a film that is not in the library gets no match, and the engine says so instead of inventing one.

## Getting the best from it

Upload a clean screenshot without player controls over the picture, or a clip of a few seconds. Heavy filters, picture-in-picture or a photo of a screen taken at an angle move the fingerprint further from the original and can push a match below the threshold.
"#,
    },
    Seed {
        slug: "your-uploads-are-deleted-after-analysis",
        title: "Your Uploads Are Deleted After Analysis",
        summary: "What we keep, what we never keep, and how to remove what is left: a plain-language tour of how your screenshots and clips are handled.",
        category: "Privacy",
        tags: "privacy,security,data",
        date: (2026, 10, 27),
        content: r#"A screenshot can say more about you than you intend: a notification in the corner, a family photo on the TV stand, the name of a profile on a streaming service. So the rule here is simple: **the file you upload is used for one identification and then deleted.**

## What happens to your file

1. It is streamed to a temporary file on the server, and the size limit is checked while it arrives, so an oversized file is rejected before it is stored in full.
2. The real file type is checked from its content, not just from its name.
3. The image, or a few key frames and optionally the audio track of a clip, is prepared and sent to the engine that analyses it.
4. The temporary files are deleted, whether the identification succeeded or failed.

There is no gallery of uploads, and no one browses them later, because they do not exist later.

## What is sent to AI providers

If a cloud engine is used, the prepared image or frames are sent to that provider over an encrypted connection to produce an answer. The Library engine sends nothing anywhere: it compares fingerprints on the server itself. The engine you choose in the upload panel decides which provider, if any, sees your picture.

## What we keep

- **If you are signed in:** the *result* of an identification (title, year, poster link, confidence and the details we looked up) is saved to your history, so you can find it again. The uploaded file is not part of it.
- **If you are a guest:** the result is shown to you and can be shared by link. Your one free identification is counted in your browser, and the server keeps only what it needs to enforce that count fairly.
- **If you write a review:** your rating, your text and your username may be shown on the home page.

## How to remove it

Your history page has a **Clear History** button that permanently deletes every saved result. Deleting your account removes your history and your reviews with it. If you have a question about your data, the contact address in the footer reaches a person.
"#,
    },
    Seed {
        slug: "screenshot-or-clip-what-to-upload",
        title: "Screenshot or Clip? Choosing What to Upload",
        summary: "A still frame is fastest; a short clip carries motion and sound. Here is when each one is the better choice, and why shorter clips usually win.",
        category: "Guides",
        tags: "video,audio,tips",
        date: (2026, 11, 3),
        content: r#"Both work. They are good at different things.

## Start with a screenshot when...

- **someone recognisable is on screen.** A clear face is the strongest clue there is.
- **the place is distinctive:** a famous skyline, an unusual set, a title card.
- **you want an answer fast.** An image is analysed in well under a minute, usually much quicker.

A good screenshot is small, sharp and quick to upload. Our screenshot guide has the details.

## Switch to a clip when...

- **the frame alone is generic.** A car on a highway or a dark corridor could be from a thousand films; ten seconds of the same scene usually are not.
- **the sound is the clue.** A line of dialogue, a theme tune or a narrator's voice. Leave the **audio analysis** option on (it is on by default for videos) and the soundtrack is analysed too.
- **you want the exact moment** from a library the site has indexed: several frames in a row give the Library engine far more to match.

## Keep clips short

Five to fifteen seconds around the moment is plenty. Longer clips take longer to upload and to analyse, and they are more likely to hit the site's maximum file size. MP4 and MOV are the safest formats; the upload panel shows the exact formats and size limit this site accepts.

Expect a clip to take a little longer than an image: roughly one to two minutes, and a bit more with audio analysis on. The processing screen shows each step as it happens.

## When neither works

If both a screenshot and a clip come back with a low match, the scene may simply be too generic, or the title may be missing from the catalogue. Try a different moment with a face or a piece of on-screen text, or choose the Ensemble engine so several engines vote on the answer.
"#,
    },
    Seed {
        slug: "when-a-scene-wont-identify",
        title: "When a Scene Won't Identify: A Troubleshooting Checklist",
        summary: "File too large, format not accepted, low confidence or a timeout: what each message means and the quickest way past it.",
        category: "Help",
        tags: "troubleshooting,errors,help",
        date: (2026, 11, 10),
        content: r#"Most problems fall into one of five groups. Each error screen tells you which one you hit; here is what to do next.

## "File Too Large"

The site's administrator sets the maximum upload size, and the upload panel shows it. To get under it:

- for a screenshot, save it as JPG or WebP instead of PNG, or crop away black bars;
- for a video, trim it to the ten seconds that matter, or export it at 720p.

## "File Format Issue"

Only the formats listed in the upload panel are accepted; the defaults are JPG, JPEG, PNG, WebP, MP4 and MOV. The file's content is checked, not only its name, so renaming a `.heic` photo to `.jpg` does not help. Export or convert it to one of the listed formats instead. If a file in a listed format is still rejected, it may be damaged: open it on your device to check that it plays.

## "Upload Timed Out" or "Connection Issue"

Large clips on a slow connection can take a while. Try a shorter clip or a screenshot, switch from mobile data to Wi-Fi, and make sure the page did not go offline (a banner at the top tells you when it does).

## "Identification Failed" or a low match

The engines could not find a confident answer. In order of what helps most:

1. Choose a different frame, one with a clear face, a landmark or on-screen text.
2. Capture the screen directly instead of photographing it.
3. Upload a short clip with audio analysis on.
4. Try the Ensemble engine, so several engines vote.

A low match percentage is the system being honest. Check the poster and the cast list before you trust it.

## "Too many requests"

Slow down for a moment. Limits protect the service for everyone and reset within a minute.

## Still stuck?

Open **Technical details** on the error screen and copy what it says into an email to the contact address in the footer. It tells us exactly what went wrong without you having to describe it.
"#,
    },
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        for seed in SEEDS {
            let exists = db
                .query_one(
                    &Query::select()
                        .column(BlogPosts::Slug)
                        .from(BlogPosts::Table)
                        .and_where(Expr::col(BlogPosts::Slug).eq(seed.slug))
                        .to_owned(),
                )
                .await?
                .is_some();
            if exists {
                continue;
            }
            let (y, mo, d) = seed.date;
            let at = Utc
                .with_ymd_and_hms(y, mo, d, 9, 0, 0)
                .single()
                .ok_or_else(|| DbErr::Custom(format!("bad seed date for {}", seed.slug)))?;
            let insert = Query::insert()
                .into_table(BlogPosts::Table)
                .columns([
                    BlogPosts::Slug,
                    BlogPosts::Title,
                    BlogPosts::Summary,
                    BlogPosts::Content,
                    BlogPosts::Category,
                    BlogPosts::Tags,
                    BlogPosts::Published,
                    BlogPosts::CreatedAt,
                    BlogPosts::UpdatedAt,
                ])
                .values_panic([
                    seed.slug.into(),
                    seed.title.into(),
                    seed.summary.into(),
                    seed.content.into(),
                    seed.category.into(),
                    seed.tags.into(),
                    true.into(),
                    at.into(),
                    at.into(),
                ])
                .to_owned();
            db.execute(&insert).await?;
        }
        Ok(())
    }
}
