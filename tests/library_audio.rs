//! The Library engine's audio tier: a clip whose picture is useless is still found by its
//! soundtrack; unrelated sound is no match; landmark files follow their video.
use std::path::{Path, PathBuf};

use reelfind::library::{AddOutcome, Quiet, audio};

use crate::library::{demo_clip, ffmpeg, library_folder, test_pattern_video};
use crate::support::TestApp;

/// 3 s of the demo clip from 1.5 s: the sound re-encoded, the picture black.
fn black_excerpt(folder: &Path) -> PathBuf {
    let src = folder.join("big-buck-bunny.mp4");
    let out = folder.join("black.mp4");
    ffmpeg(&[
        "-ss",
        "1.5",
        "-t",
        "3",
        "-i",
        src.to_str().unwrap(),
        "-f",
        "lavfi",
        "-i",
        "color=black:s=640x360:r=25:d=3",
        "-map",
        "1:v",
        "-map",
        "0:a",
        "-c:a",
        "aac",
        "-b:a",
        "96k",
        "-shortest",
        out.to_str().unwrap(),
    ]);
    out
}

#[tokio::test]
async fn a_clip_with_a_black_picture_is_found_by_its_soundtrack() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = &app.state.library;
    let report = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (1, 0), "{report:?}");
    let video = &lib.list()[0];
    assert!(video.audio_landmarks > 50, "{video:?}");
    assert!(audio::landmarks_path(lib.dir(), video.id).is_file());

    let clip = black_excerpt(folder.path());
    // The picture alone has nothing to say...
    let visual = lib.search_clip(&clip).unwrap();
    assert!(visual.best.is_none(), "{:?}", visual.best);
    // ...the soundtrack does.
    let answer = lib.search_clip_av(&clip).unwrap();
    let m = answer.best.unwrap_or_else(|| panic!("no match: {:?}", answer.reason));
    assert_eq!((m.title.as_str(), m.year, m.tier), ("Big Buck Bunny", Some(2008), "audio"));
    assert!((m.from - 1.5).abs() <= 0.1, "from {}", m.from);
    assert!((m.to - 4.5).abs() <= 0.2, "to {}", m.to);
    assert!(m.from <= m.at && m.at <= m.to, "{m:?}");
    assert!(m.similarity >= 0.5 && m.similarity < 1.0, "{}", m.similarity);

    // The same through /api/identify, mode library.
    let bytes = std::fs::read(&clip).unwrap();
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::video(bytes, "library", false)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!((r["title"].as_str(), r["engine"].as_str()), (Some("Big Buck Bunny"), Some("library")));
    let from = r["timestamp"]["from"].as_f64().unwrap();
    assert!((from - 1.5).abs() <= 0.1, "{}", r["timestamp"]);
    assert!(r.to_string().contains("soundtrack matches"), "{r}");
}

#[tokio::test]
async fn picture_and_soundtrack_agreeing_are_more_confident_than_the_picture_alone() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = &app.state.library;
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let clip = folder.path().join("excerpt.mp4");
    let src = folder.path().join("big-buck-bunny.mp4");
    ffmpeg(&["-ss", "1.0", "-t", "3", "-i", src.to_str().unwrap(), "-vf", "scale=640:-2", clip.to_str().unwrap()]);
    let visual = lib.search_clip(&clip).unwrap().best.expect("the picture matches");
    let fused = lib.search_clip_av(&clip).unwrap().best.expect("fused match");
    assert_eq!(fused.tier, "clip+audio");
    assert_eq!(fused.title, "Big Buck Bunny");
    assert!(fused.similarity > visual.similarity, "{} vs {}", fused.similarity, visual.similarity);
    assert!((fused.from - 1.0).abs() <= 0.1, "from {}", fused.from);
}

#[tokio::test]
async fn unrelated_sound_under_a_black_picture_is_no_match() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = &app.state.library;
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    for (i, sound) in [
        "flite=text='The quick brown fox jumps over the lazy dog and runs away':voice=slt",
        "sine=frequency=440:duration=3",
        "anoisesrc=color=pink:amplitude=0.3:duration=3",
    ]
    .iter()
    .enumerate()
    {
        let clip = folder.path().join(format!("other-{i}.mp4"));
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            sound,
            "-f",
            "lavfi",
            "-i",
            "color=black:s=640x360:r=25:d=3",
            "-t",
            "3",
            "-c:a",
            "aac",
            clip.to_str().unwrap(),
        ]);
        let answer = lib.search_clip_av(&clip).unwrap();
        assert!(answer.best.is_none(), "{sound}: {:?}", answer.best);
        assert!(answer.reason.is_some());
    }
}

#[tokio::test]
async fn landmark_files_follow_their_video_and_silent_videos_have_none() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = &app.state.library;
    // A video without an audio stream: indexed by its picture, no audio tier, no error.
    let mute = folder.path().join("mute.mp4");
    test_pattern_video(&mute);
    let report = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");
    let videos = lib.list();
    let bunny = videos.iter().find(|v| v.meta.title == "Big Buck Bunny").unwrap().clone();
    let silent = videos.iter().find(|v| v.path.ends_with("mute.mp4")).unwrap().clone();
    assert_eq!(silent.audio_landmarks, 0);
    assert!(!audio::landmarks_path(lib.dir(), silent.id).exists());
    // Searched as a clip, it is the picture's alone: the soundtrack says nothing, and no error.
    let heard = lib.search_audio(&mute).map(|hit| hit.is_none()).map_err(|e| format!("{e:#}"));
    assert_eq!(heard, Ok(true));
    let file = audio::landmarks_path(lib.dir(), bunny.id);
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(bytes.len(), 32 + 8 * bunny.audio_landmarks as usize);

    // Adding again changes nothing, the landmark file included.
    let again = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((again.added, again.reindexed, again.unchanged), (0, 0, 2));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // Re-indexing a changed file replaces the landmark file under the new id.
    ffmpeg(&[
        "-ss",
        "1",
        "-i",
        demo_clip().to_str().unwrap(),
        "-t",
        "3",
        folder.path().join("big-buck-bunny.mp4").to_str().unwrap(),
    ]);
    let out = lib.add_video(&folder.path().join("big-buck-bunny.mp4"), None, &mut Quiet).unwrap();
    let AddOutcome::Reindexed { id, .. } = out else { panic!("{out:?}") };
    assert!(!file.exists(), "the old landmark file is gone");
    assert!(audio::landmarks_path(lib.dir(), id).is_file());

    // Removing the video deletes its landmark file.
    lib.remove(&id.to_string()).unwrap();
    assert!(!audio::landmarks_path(lib.dir(), id).exists());
    assert_eq!(lib.audio_bytes(), 0);
}
