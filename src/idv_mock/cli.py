"""The ``idv-mock`` command. Each subcommand imports what it needs when it runs, so
``idv-mock --help`` starts in a blink."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.ground import crypto
from idv_mock.ground.clock import MODES as CLOCK_MODES
from idv_mock.ground.progress import Progress

if TYPE_CHECKING:
    from idv_mock.tools.persistence import StateFile

DESCRIPTION = (
    "A contract-faithful, stateful mock of an identity verification API v3. "
    "serve: run the mock; receive: print the webhooks that arrive; crypto: Secure Data "
    "Transfer from stdin to stdout; scenario run: play a scenario file and check it; "
    "openapi: print the OpenAPI document; verify: probe any deployment, read-only; "
    "trigger: one vendor webhook from a real flow; form walk: the hosted form over HTTP."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="idv-mock", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the mock server")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="port to bind (default 8080)")
    serve.add_argument("--api-key", default="mock-api-key", help="the default project's API key")
    serve.add_argument(
        "--admin",
        action="append",
        help="an administrator e-mail of the default project (repeatable; "
        "default admin@example.com)",
    )
    serve.add_argument("--seed-count", type=int, default=50, help="seeded submissions (50)")
    serve.add_argument("--random-seed", type=int, default=0, help="seed of the fake data (0)")
    serve.add_argument(
        "--quiet",
        action="store_true",
        help="no progress line while seeding, loading or saving (shown only on a terminal)",
    )
    serve.add_argument(
        "--no-start-cache",
        action="store_true",
        help="seed even when this seeding (2,000 submissions or more) was kept in the start "
        "cache (~/.cache/idv-mock, or $XDG_CACHE_HOME/idv-mock), and write no entry",
    )
    serve.add_argument(
        "--secure-transfer",
        action="store_true",
        help="switch on Secure Data Transfer for the default project",
    )
    serve.add_argument(
        "--clock",
        choices=CLOCK_MODES,
        default="tick",
        help="every project's clock unless its option clock_mode says otherwise: tick: "
        "deterministic time that moves 1 s per read (default); wall: real time; frozen: "
        "moves only when advanced (idv-mock clock advance)",
    )
    serve.add_argument(
        "--webhook-url", default=None, help="the default project's webhook URL (none)"
    )
    serve.add_argument(
        "--auth-errors",
        choices=("api-v3", "gateway"),
        default="api-v3",
        help="a missing or wrong x-api-key: api-v3: each call's own error (default); "
        'gateway: the vendor gateway\'s 403 {"message": "Forbidden"} (PUT /__admin/settings '
        "changes it; a reset puts this value back)",
    )
    serve.add_argument(
        "--state-file",
        default=None,
        help="load the state from this file at start (if present); save it at once, "
        "periodically when changed, and on shutdown (none)",
    )
    serve.add_argument(
        "--save-interval",
        type=float,
        default=30.0,
        help="with --state-file: also save every N seconds when something changed; "
        "0 saves on shutdown only (30)",
    )
    serve.add_argument(
        "--no-stop-writes-on-save-error",
        dest="stop_writes_on_save_error",
        action="store_false",
        help="with --state-file: keep accepting writes while saves fail (default: writes "
        "answer 503 until a save succeeds again)",
    )
    serve.add_argument(
        "--request-timeout",
        type=float,
        default=20.0,
        help="seconds a client has to send a whole request (headers and body) before the "
        "connection is closed; 0: no limit (20)",
    )
    serve.add_argument(
        "--admin-token",
        default=None,
        help="with --host beyond loopback: the token every /__admin call (and the dashboard) "
        "must carry in the header x-idv-mock-admin-token (none: /__admin is refused)",
    )
    serve.add_argument(
        "--admin-open",
        action="store_true",
        help="with --host beyond loopback: leave /__admin open to the network, no token",
    )
    serve.add_argument(
        "--allow-webhook-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="let webhooks go to this host even though it is this server (any address of "
        "this machine on its port), link-local or unspecified, as written in the URL or as "
        "it resolves (repeatable)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name /__admin and the dashboard answer to besides localhost, loopback "
        "addresses and --host (e.g. a Docker service name; repeatable); others get 403 "
        "(DNS rebinding protection)",
    )
    serve.add_argument(
        "--journal-size",
        type=int,
        default=10_000,
        help="API calls kept per project in the request journal (10000)",
    )
    serve.add_argument(
        "--no-hints",
        dest="hints",
        action="store_false",
        help="no near-miss hints (header x-idv-mock-hint, journal, log) for calls that do "
        "not match the contract (default: on)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="answer CORS for browser clients of this origin, e.g. http://localhost:3000, "
        "or * (repeatable; default: no CORS, like the real API)",
    )
    serve.add_argument("--log-level", default="warning", help="uvicorn log level (warning)")
    serve.add_argument(
        "--access-log",
        action="store_true",
        help="uvicorn's access log, a line per request, printed at --log-level info or lower "
        "(off: even unprinted, it costs a few microseconds per request)",
    )
    serve.add_argument(
        "--scenario",
        metavar="FILE",
        default=None,
        help="start with the given state of a scenario file (or built-in scenario name)",
    )
    receive = sub.add_parser("receive", help="a local webhook receiver that prints what arrives")
    receive.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    receive.add_argument("--port", type=int, default=9000, help="port to bind (9000)")
    receive.add_argument("--api-key", default=None, help="decrypt encrypted payloads with it")
    crypto_cmd = sub.add_parser("crypto", help="Secure Data Transfer: stdin -> stdout")
    crypto_cmd.add_argument("action", choices=("encrypt", "decrypt"))
    crypto_cmd.add_argument("--api-key", required=True, help="the project's API key")
    crypto_cmd.add_argument(
        "--key-derivation", choices=crypto.KEY_DERIVATIONS, default="sha256", help="(sha256)"
    )
    crypto_cmd.add_argument(
        "--gcm",
        action="store_true",
        help="AES-256-GCM, base64(nonce 12 || ciphertext || tag 16), as the hosted form's "
        "liveform_cipher gcm (default: AES-256-ECB)",
    )
    scenario = sub.add_parser("scenario", help="run a scenario file's steps and check them")
    scenario_sub = scenario.add_subparsers(dest="action", required=True)
    scenario_run = scenario_sub.add_parser("run", help="run FILE in-process or against a server")
    scenario_run.add_argument("file", metavar="FILE", help="a scenario file or built-in name")
    scenario_run.add_argument(
        "--base-url", default=None, help="a live server, e.g. http://127.0.0.1:8080/v3 (none)"
    )
    scenario_run.add_argument("--api-key", default=None, help="the default project's API key")
    resets = scenario_run.add_mutually_exclusive_group()
    resets.add_argument(
        "--reset",
        action="store_true",
        help="first put the projects the scenario uses back to their start "
        "(POST /__admin/projects/{id}/reset each); the server's other projects stay",
    )
    resets.add_argument(
        "--reset-all",
        action="store_true",
        help="first put every project of the server back to its start (POST /__admin/reset)",
    )
    clock_cmd = sub.add_parser(
        "clock", help="a running server's project clock: show it, or advance it (docs/time.md)"
    )
    clock_cmd.add_argument("action", nargs="?", choices=("show", "advance"), default="show")
    clock_cmd.add_argument(
        "duration", nargs="?", default=None, help="how far: 90, 90s, 15m, 3h, 2d or 1w"
    )
    clock_cmd.add_argument("--to", default=None, help="advance to this ISO 8601 instant")
    clock_cmd.add_argument(
        "--url", default="http://127.0.0.1:8080", help="the server (http://127.0.0.1:8080)"
    )
    clock_cmd.add_argument("--project", default="default", help="the project id (default)")
    clock_cmd.add_argument(
        "--admin-token",
        default=os.environ.get("IDV_MOCK_ADMIN_TOKEN"),
        help="the server's admin token, when it has one (env IDV_MOCK_ADMIN_TOKEN)",
    )
    openapi_cmd = sub.add_parser("openapi", help="print the OpenAPI document (JSON)")
    openapi_cmd.add_argument(
        "--openapi-version", choices=("3.1", "3.0"), default="3.1", help="(3.1)"
    )
    resilience = sub.add_parser(
        "resilience",
        help="run a pytest suite once per resilience profile: idv-mock resilience -- pytest ARGS",
    )
    resilience.add_argument(
        "--profiles", default=None, help="comma-separated names or files (all built-in)"
    )
    resilience.add_argument("--dir", default="idv-resilience", help="where the report goes")
    resilience.add_argument("--jobs", type=int, default=1, help="profiles run at once (1)")
    resilience.add_argument("--list", action="store_true", help="list the built-in profiles")
    resilience.add_argument("pytest", nargs=argparse.REMAINDER, help="-- pytest ARGS")
    _add_trigger(sub)
    coverage = sub.add_parser(
        "coverage",
        help="contract coverage: what a suite made the mock do "
        "(idv-mock coverage --url URL, or -- pytest ARGS)",
    )
    coverage.add_argument("--url", default=None, help="a running mock (its root URL)")
    coverage.add_argument("--project", default=None, help="one project (default: all)")
    coverage.add_argument("--json", default=None, metavar="FILE", help="write the report")
    coverage.add_argument("--html", default=None, metavar="FILE", help="write the HTML page")
    coverage.add_argument(
        "--fail-under", type=float, default=None, metavar="PCT", help="exit 1 below PCT%%"
    )
    coverage.add_argument(
        "--dir", default=".idv-coverage", help="-- pytest: where the suite's report goes"
    )
    coverage.add_argument(
        "--admin-token",
        default=os.environ.get("IDV_MOCK_ADMIN_TOKEN"),
        help="the server's admin token, when it has one (env IDV_MOCK_ADMIN_TOKEN)",
    )
    coverage.add_argument("pytest", nargs=argparse.REMAINDER, help="-- pytest ARGS")
    sub.add_parser(
        "verify",
        add_help=False,
        help="read-only conformance probe of any deployment (idv-mock verify --help)",
    )
    return parser


def _add_trigger(sub: Any) -> None:
    """``trigger EVENT`` and ``form walk LINK`` (``idv_mock.tools.trigger``,
    ``idv_mock.tools.formwalk``)."""
    from idv_mock.tools.formwalk import OUTCOMES
    from idv_mock.tools.trigger import TRIGGERS

    trigger = sub.add_parser("trigger", help="cause one vendor webhook through a real flow")
    trigger.add_argument("event", metavar="EVENT", choices=TRIGGERS, help=", ".join(TRIGGERS))
    trigger.add_argument(
        "--url", default="http://127.0.0.1:8080", help="the server (http://127.0.0.1:8080)"
    )
    trigger.add_argument("--project", default="default", help="the project id (default)")
    trigger.add_argument("--api-key", default=None, help="the project's API key (read from it)")
    trigger.add_argument(
        "--admin",
        "--admin-token",
        dest="admin_token",
        default=os.environ.get("IDV_MOCK_ADMIN_TOKEN"),
        help="the server's admin token, when it has one (env IDV_MOCK_ADMIN_TOKEN)",
    )
    trigger.add_argument(
        "--forward-to", default=None, metavar="URL", help="send this one event to URL instead"
    )
    trigger.add_argument(
        "--reason",
        default=None,
        help="rejected: the reject code; retry: the retry code; "
        "injectionFail: the failCode (default: what the form offers first)",
    )
    form = sub.add_parser("form", help="the hosted form over plain HTTP")
    form_sub = form.add_subparsers(dest="action", required=True)
    walk = form_sub.add_parser("walk", help="walk a form link to an outcome")
    walk.add_argument(
        "link", metavar="LINK", help="a form link, e.g. http://127.0.0.1:8080/?pid=default"
    )
    walk.add_argument("--outcome", choices=OUTCOMES, default="approved", help="(approved)")
    walk.add_argument("--reason", default=None, help="rejected: reject code; retry: retry code")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["verify"]:
        from idv_mock.tools import verify

        return verify.main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "openapi":
        from idv_mock.api.openapi import document

        print(orjson.dumps(document(args.openapi_version), option=orjson.OPT_INDENT_2).decode())
        return 0
    if args.command == "serve":
        return serve(args)
    if args.command == "receive":
        from idv_mock.delivery.receiver import run

        return run(args.host, args.port, args.api_key)
    if args.command == "scenario":
        return run_scenario(args)
    if args.command == "clock":
        return run_clock(args)
    if args.command == "resilience":
        return run_resilience(args)
    if args.command == "trigger":
        from idv_mock.tools import trigger

        return trigger.main(
            args.event, args.url, args.project, api_key=args.api_key,
            admin_token=args.admin_token, forward_to=args.forward_to, reason=args.reason,
        )  # fmt: skip
    if args.command == "form":
        from idv_mock.tools import formwalk

        return formwalk.main(args.link, args.outcome, args.reason)
    if args.command == "coverage":
        from idv_mock.coverage import command

        return command.main(
            args.url, args.project, args.json, args.html, args.fail_under,
            args.admin_token, args.dir, args.pytest,
        )  # fmt: skip
    return run_crypto(args)


def run_resilience(args: argparse.Namespace) -> int:
    """``idv-mock resilience -- pytest ARGS``: the same run as ``pytest --idv-resilience``."""
    from idv_mock.resilience import profiles, runner

    if args.list:
        for name in profiles.builtins():
            print(f"{name:<14} {profiles.load(name).description}")
        return 0
    rest = list(args.pytest)
    rest = rest[1:] if rest[:1] == ["--"] else rest
    rest = rest[1:] if rest[:1] == ["pytest"] else rest
    names = [n.strip() for n in args.profiles.split(",") if n.strip()] if args.profiles else None
    try:
        return runner.run_all(rest, names, args.dir, jobs=args.jobs)
    except profiles.ProfileError as exc:
        print(f"idv-mock resilience: {exc}", file=sys.stderr)
        return 2


def run_scenario(args: argparse.Namespace) -> int:
    """``idv-mock scenario run``: PASS/FAIL per step; 1 on a failure, 2 on a malformed file."""
    from idv_mock import scenarios

    try:
        scenario = scenarios.load(scenarios.find(args.file))
    except scenarios.ScenarioError as exc:
        print(f"idv-mock scenario: {exc}", file=sys.stderr)
        return 2
    where = args.base_url or "in-process"
    print(f"scenario: {scenario.name} ({scenario.file}, {where})", flush=True)
    results = scenarios.run(
        scenario,
        base_url=args.base_url,
        api_key=args.api_key,
        reset=args.reset,
        reset_all=args.reset_all,
    )
    for result in results:
        print(result, flush=True)
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


CORS_ANY_WARNING = (
    "idv-mock serve: warning: --cors-origin '*' lets any web page call /v3 with a key it "
    "knows; /__admin still refuses other origins (name an origin exactly to let its pages "
    "use the control API)"
)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _seconds(text: str) -> float | None:
    """``90``, ``90s``, ``15m``, ``3h``, ``2d``, ``1w`` in seconds; None if it is none of them."""
    unit = UNITS.get(text[-1:].lower(), 0)
    number = text[:-1] if unit else text
    try:
        value = float(number) * (unit or 1)
    except ValueError:
        return None
    return value if value >= 0 else None


def run_clock(args: argparse.Namespace) -> int:
    """``idv-mock clock``: show a project's clock, or advance it, over the control API."""
    import httpx

    base = f"{args.url.rstrip('/')}/__admin/projects/{args.project}/clock"
    headers = {"x-idv-mock-admin-token": args.admin_token} if args.admin_token else {}
    if args.action == "advance":
        seconds = _seconds(args.duration) if args.duration else None
        if (seconds is None) == (args.to is None):
            print(
                "idv-mock clock advance: give a duration (90s, 15m, 3h, 2d) or --to ISO",
                file=sys.stderr,
            )
            return 2
        body = {"to": args.to} if args.to else {"seconds": seconds}
    try:
        if args.action == "advance":
            response = httpx.post(base + "/advance", json=body, headers=headers)
        else:
            response = httpx.get(base, headers=headers)
    except httpx.HTTPError as exc:
        print(f"idv-mock clock: {args.url}: {exc}", file=sys.stderr)
        return 1
    found = response.json() if response.content else {}
    if response.status_code != 200:
        print(f"idv-mock clock: {response.status_code} {found.get('message', '')}", file=sys.stderr)
        return 1
    print(f"now:  {found['now']} ({found['mode']})")
    title, items = ("fired", found["fired"]) if "fired" in found else ("due", found["due"])
    print(f"{title}: {len(items)}")
    for item in items:
        detail = " ".join(f"{k}={v}" for k, v in item.items() if k not in ("at", "what"))
        print(f"  {item['at']}  {item['what']}  {detail}".rstrip())
    return 0


def run_crypto(args: argparse.Namespace) -> int:
    text = sys.stdin.read()
    try:
        if args.action == "encrypt":
            encrypt = crypto.encrypt_gcm if args.gcm else crypto.encrypt
            out = encrypt(text.rstrip("\n"), args.api_key, args.key_derivation)
        elif args.gcm:
            out = crypto.decrypt_gcm_text(text, args.api_key, args.key_derivation)
        else:
            out = crypto.decrypt_text(text, args.api_key, args.key_derivation)
    except crypto.CryptoError as exc:
        print(f"idv-mock crypto: {exc}", file=sys.stderr)
        return 1
    print(out)
    return 0


class LazyScenarios:
    """``idv_mock.scenarios``, imported when the dashboard first runs one (start-up stays
    light)."""

    def __getattr__(self, name: str) -> Any:
        from idv_mock import scenarios

        return getattr(scenarios, name)


def serve(args: argparse.Namespace) -> int:
    from idv_mock.backend import ServiceConfig

    admins = tuple(args.admin or ["admin@example.com"])
    options: dict[str, object] = {"secure_transfer": True} if args.secure_transfer else {}
    if args.webhook_url:
        options["webhook_url"] = args.webhook_url
    # an existing state file is the start: seeding first (100k: ~20 s) would be thrown away
    from_file = args.state_file is not None and Path(args.state_file).exists()
    config = ServiceConfig(
        api_key=args.api_key,
        admins=admins,
        seed_count=0 if from_file else args.seed_count,
        random_seed=args.random_seed,
        options=options,
        clock_mode=args.clock,
        journal_size=args.journal_size,
        server_port=args.port,
        server_host=args.host,
        allowed_webhook_hosts=tuple(args.allow_webhook_host),
        auth_errors=args.auth_errors,
    )
    progress = Progress.on_terminal(sys.stderr, quiet=args.quiet)
    # uvicorn shuts down on SIGINT/SIGTERM and then raises the signal again once its own
    # handlers are gone: SIGTERM's default handler would end the process right there (by
    # the signal, before a final save or a start cache entry is finished). As an exception
    # instead, ``serve`` finishes what it has to and exits 0 (SIGINT: KeyboardInterrupt).
    signal.signal(signal.SIGTERM, _exit_on_signal)
    service, cached, writing = _seeded(args, config, progress)
    try:
        return _serve_seeded(args, service, cached, writing, admins, progress, from_file)
    finally:
        if writing is not None and writing.is_alive():  # the entry is finished, not lost
            print("idv-mock serve: finishing the start cache entry", file=sys.stderr, flush=True)
            writing.join()


def _serve_seeded(
    args: argparse.Namespace,
    service: Any,
    cached: str,
    writing: threading.Thread | None,
    admins: tuple[str, ...],
    progress: Progress,
    from_file: bool,
) -> int:
    """``serve`` once its service has its start: scenario, app, banner, uvicorn (which
    starts ``writing``, the start cache's entry, once it accepts); ``from_file``: an
    existing state file is the start (nothing was seeded)."""
    from idv_mock.api.app import create_app
    from idv_mock.api.exposure import is_loopback

    service.clocks.watch()  # what falls due on a ticking or wall clock happens on time
    if args.scenario:
        from idv_mock import scenarios

        try:
            scenario = scenarios.load(scenarios.find(args.scenario))
            scenarios.apply_given(service, scenario)
        except scenarios.ScenarioError as exc:
            print(f"idv-mock serve: {exc}", file=sys.stderr)
            return 2
    if "*" in args.cors_origin:
        print(CORS_ANY_WARNING, file=sys.stderr, flush=True)
    exposed = not is_loopback(args.host)
    app = create_app(
        service,
        exposed=exposed,
        admin_token=args.admin_token,
        admin_open=args.admin_open,
        hints=args.hints,
        cors_origins=tuple(args.cors_origin),
        bound_host=args.host,
        allowed_hosts=tuple(args.allowed_host),
    )
    app.state.scenarios = LazyScenarios()  # the dashboard's runner (web/ cannot import it)
    app.state.after_start = writing
    _log_to_stderr("idv_mock.hints", "idv-mock: hint: ")
    banner = _banner(args, app, service, admins, scenario if args.scenario else None, from_file)
    if cached:
        banner += f"\n  start cache: {cached}"
    if args.state_file is None:
        print(banner, flush=True)
        _run_uvicorn(app, args)
        return 0
    return _serve_with_state(args, service, app, banner, progress)


def _seeded(
    args: argparse.Namespace, config: Any, progress: Progress
) -> tuple[Any, str, threading.Thread | None]:
    """The service of ``config``, its start read from the start cache when this seeding
    is kept there (else seeded, and kept); what the banner says of the cache ("" when
    it is not used); the thread writing a new entry (joined before ``serve`` returns)."""
    from idv_mock.backend import Service

    if args.no_start_cache:
        return Service(config, progress=progress), "", None
    from idv_mock.tools import start_cache

    path = start_cache.path_for(config)
    if path is None:
        return Service(config, progress=progress), "", None
    try:
        start = start_cache.load(path, progress)
    except start_cache.Damaged as exc:
        print(
            f"idv-mock serve: start cache {path} is damaged ({exc}); seeding again and "
            "rewriting it",
            file=sys.stderr,
            flush=True,
        )
        start = None
    if start is not None:
        return Service(config, start=start, progress=progress), f"{path} (read)", None
    service = Service(config, progress=progress)

    def done(written: bool, message: str) -> None:
        print(message, file=sys.stdout if written else sys.stderr, flush=True)

    writing = start_cache.save_behind(service, path, done)
    return service, f"{path} (writing)", writing


def _banner(
    args: argparse.Namespace,
    app: Any,
    service: Any,
    admins: tuple[str, ...],
    scenario: Any,
    from_file: bool,
) -> str:
    """What ``serve`` prints once it is ready to serve (after a state file has loaded)."""
    seeded = f"{args.seed_count} submissions, seed {args.random_seed}"
    if from_file:
        seeded = f"not seeded: the state file is the start; seed {args.random_seed}"
    lines = [
        f"idv-mock serving http://{args.host}:{args.port}/v3",
        f"  {app.state.exposure.describe()}",
        f"  api key: {args.api_key}   admin: {', '.join(admins)}",
        f"  project: default ({seeded})",
    ]
    if args.secure_transfer:
        lines.append(
            "  Secure Data Transfer: on for the default project (AES-256-ECB, key SHA-256 of "
            "the API key; see idv-mock crypto)"
        )
    if scenario is not None:
        lines.append(f"  scenario: {scenario.name} ({scenario.file})")
        lines.append(f"  projects (id: api key): {_project_keys(service)}")
    return "\n".join(lines)


def _project_keys(service: Any) -> str:
    """Each project's id and key, marked where Secure Data Transfer is on."""
    return ", ".join(
        f"{p.project_id}: {p.api_key}"
        + (" (Secure Data Transfer)" if p.options.get("secure_transfer") else "")
        for p in service.projects.values()
    )


def _serve_with_state(
    args: argparse.Namespace, service: Any, app: Any, banner: str, progress: Progress
) -> int:
    """Load the state file (refusing a foreign one), save it periodically and on shutdown;
    ``banner`` is printed once the file has loaded (a refused file prints only its error)."""
    from idv_mock.tools import persistence

    path = Path(args.state_file)
    if not path.parent.is_dir() or not os.access(path.parent, os.W_OK):
        print(f"idv-mock serve: {path.parent} is not a writable folder", file=sys.stderr)
        return 2
    state = persistence.StateFile(
        service, path, stop_writes=args.stop_writes_on_save_error, progress=progress
    )
    try:
        loaded = state.open()
    except persistence.StateFileError as exc:
        print(f"idv-mock serve: {exc}", file=sys.stderr)
        return 2
    status = "loaded" if loaded else "new"
    print(banner, flush=True)
    print(f"  state file: {path} ({status}, start {state.epoch})", flush=True)
    if loaded:
        keys = _project_keys(service)
        print(f"  the file's projects replace the flags' default project; keys: {keys}", flush=True)
    print(_saver_banner(state, args.save_interval), flush=True)
    _log_to_stderr("idv_mock.state_file", "idv-mock: state file: ")
    saver = persistence.PeriodicSaver(state, args.save_interval).start()
    code: object = 0  # SIGINT and SIGTERM end uvicorn in an exception (``serve``'s handler)
    try:
        _run_uvicorn(app, args)
    except KeyboardInterrupt:
        pass
    except SystemExit as exc:
        code = exc.code  # 0 from a signal; uvicorn's own exit (a port in use) is not 0
    finally:
        saver.stop()
    return _final_save(state) or (code if isinstance(code, int) else 1)


def _saver_banner(state: StateFile, interval: float) -> str:
    health = state.health
    when = f"every {interval:g} s when changed, and on shutdown" if interval else "on shutdown"
    on_error = "writes answer 503" if health.stop_writes else "writes still accepted"
    return f"  saves: {when}; last save {health.last_save_at}; on a failed save: {on_error}"


def _log_to_stderr(logger_name: str, prefix: str) -> None:
    """Each record of ``logger_name`` as one line on stderr, after ``prefix`` (uvicorn
    configures only its own loggers): failed state-file saves, near-miss hints."""
    import logging

    logger = logging.getLogger(logger_name)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{prefix}%(message)s"))
        logger.addHandler(handler)
        logger.propagate = False


def _final_save(state: StateFile) -> int:
    """The shutdown save: 0, or 1 with one line saying what is lost (never a traceback)."""
    from idv_mock.tools import persistence

    try:
        state.save_if_changed(shown=True)
    except Exception as exc:  # one clear line, whatever went wrong
        since = state.health.last_save_at or "the start"
        error = persistence.describe_error(exc)
        print(
            f"idv-mock serve: final save to {state.path} failed ({error}); "
            f"changes since {since} are lost",
            file=sys.stderr,
            flush=True,
        )
        return 1
    return 0


def _run_uvicorn(app: Any, args: argparse.Namespace) -> None:
    """uvicorn as the throughput figures assume it: its ``auto`` loop and HTTP parser pick
    uvloop and httptools (installed with the mock), and the access log is off by default.
    Once it accepts, the service's Faker is built on a daemon thread (:func:`_warm_up`)."""
    import gc

    import uvicorn

    from idv_mock.api.timeouts import timed

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                _warm_up(app.state.service)
                later = getattr(app.state, "after_start", None)
                if later is not None:  # after the start: its work would slow the start down
                    later.start()

    gc.freeze()  # the process's long-lived start state need not be walked by every collection
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        http=timed(args.request_timeout) if args.request_timeout > 0 else "auto",
        ws="none",  # the mock serves no websockets (nor loads a websockets library for them)
    )
    server = Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: Ctrl-C ends it quietly
        server.run()
    if not server.started:
        raise SystemExit(3)  # as uvicorn.run: the server never started


def _warm_up(service: Any) -> threading.Thread:
    """Build the factory's Faker and the creation's schema checks off the event loop and
    before any request needs them: the first submission a server creates would otherwise
    load them inside that request (Faker ~0.14 s of CPU, jsonschema ~0.075 s)."""

    def warm() -> None:
        from idv_mock.ground import schemas

        service.factory.warm()
        for name in ("submission_fields.json", "submission.json"):
            schemas.is_valid(name, {})  # builds and caches the validator

    thread = threading.Thread(target=warm, name="idv-mock-warm-up", daemon=True)
    thread.start()
    return thread


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(0)


if __name__ == "__main__":
    raise SystemExit(main())
