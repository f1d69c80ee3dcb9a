# A local stand-in for TMDB's v3 API, for .ci/fuzz-api: the fuzzer reaches the routes that
# ask the catalog (title search, a picked title's details) and so their real code, where a
# server without a key would answer every one 503 "not configured". It speaks the documented
# wire format (../shared/reference/provider-apis.md): `search/*` answer `{"results": [...]}`,
# `movie/{id}` and `tv/{id}` a title with its appended parts; ids above 10^6 are unknown (404
# with TMDB's `status_code` 34), so "no such title" is fuzzed too. It checks the key.
#
#   python3 .ci/fake_tmdb.py PORT KEY
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PORT, KEY = int(sys.argv[1]), sys.argv[2]

MOVIES = [
    {"id": 603, "media_type": "movie", "title": "The Matrix", "release_date": "1999-03-31",
     "popularity": 80.5, "poster_path": "/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg"},
    {"id": 1399, "media_type": "tv", "name": "Game of Thrones", "first_air_date": "2011-04-17",
     "popularity": 300.1, "poster_path": "/1XS1oqL89opfnbLl8WnZY1O1uJx.jpg"},
    {"id": 287, "media_type": "person", "name": "Brad Pitt", "popularity": 20.0},
]


def details(kind, ident):
    base = {"id": ident, "overview": "A title the fuzzer's catalog made up.", "genres": [{"id": 18, "name": "Drama"}],
            "vote_average": 7.5, "poster_path": "/p.jpg", "backdrop_path": "/b.jpg",
            "credits": {"cast": [{"id": 1, "name": "Someone", "character": "A part", "profile_path": None}], "crew": []},
            "videos": {"results": []}, "watch/providers": {"results": {}}, "recommendations": {"results": []},
            "external_ids": {"imdb_id": None}}
    if kind == "movie":
        base.update({"title": f"Film {ident}", "release_date": "2001-01-01", "runtime": 100,
                     "release_dates": {"results": []}})
    else:
        base.update({"name": f"Show {ident}", "first_air_date": "2005-05-05", "number_of_seasons": 1,
                     "content_ratings": {"results": []}})
    return base


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        bearer = self.headers.get("Authorization", "") == f"Bearer {KEY}"
        if not bearer and query.get("api_key") != [KEY]:
            return self.answer(401, {"status_code": 7, "status_message": "Invalid API key", "success": False})
        path = url.path.removeprefix("/3")
        if path.startswith("/search/"):
            return self.answer(200, {"page": 1, "results": MOVIES, "total_pages": 1, "total_results": len(MOVIES)})
        m = re.fullmatch(r"/(movie|tv)/(\d+)", path)
        if m and int(m.group(2)) <= 1_000_000:
            return self.answer(200, details(m.group(1), int(m.group(2))))
        if re.fullmatch(r"/tv/\d+/season/\d+/episode/\d+", path):
            return self.answer(200, {"name": "An episode", "overview": "", "air_date": "2005-05-05"})
        self.answer(404, {"status_code": 34, "status_message": "The resource you requested could not be found.",
                          "success": False})


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
