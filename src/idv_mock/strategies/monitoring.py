"""Wrong ongoing-monitoring calls and their exact errors."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

from idv_mock.ground import errors, operations
from idv_mock.strategies.common import (
    ABSENT,
    MAX_IDS,
    MISSING_RECORD,
    MONITOR_PATH,
    NON_STRINGS,
    NOT_NULL,
    Invalid,
    Kinds,
    S,
    given_values,
    id_lists,
    json_non_objects,
    make_body,
    make_request,
    maybe,
    non_json_bodies,
    pick_kinds,
    some_of,
    unknown_ids,
    unregistered_admins,
    wrong_keys,
)


def _monitor(kind: str, code: str, *args: str, extra: Any = None, **request: Any) -> Invalid:
    error = errors.MONITORING.error(code, *args, **(extra or {}))
    return Invalid(make_request(**request), error.status, error.body, kind)


WORKLIST = operations.path("postSubmissionAmlMonitorWorklistId")
RECORD = operations.path("getSubmissionAmlMonitorWorklistIdRecordId")


def _worklist_path(*segments: str) -> str:
    return "/".join([MONITOR_PATH, *(quote(s, safe="") for s in segments)])


@st.composite
def _any_monitor_body(draw: st.DrawFn, sids: S[str], admins: S[str]) -> dict[str, Any]:
    ids = draw(maybe(st.lists(sids, max_size=MAX_IDS + 3) | NON_STRINGS))
    return make_body(submissionIds=ids, admin=draw(maybe(admins | NON_STRINGS)))


@st.composite
def _missing_parameters(draw: st.DrawFn, sids: S[str], admins: S[str], url: str) -> Invalid:
    """``submissionIds`` and/or ``admin`` absent or empty (no JSON object: both); what is
    present may be malformed, since the presence of both is checked first."""
    missing = draw(some_of(["submissionIds", "admin"]))
    names = ", ".join(n for n in ("submissionIds", "admin") if n in missing)
    code = "missing_required_parameters"
    if len(missing) == 2 and draw(st.booleans()):
        raw = draw(non_json_bodies() | json_non_objects())
        return _monitor("missing_parameters", code, names, method="POST", url=url, content=raw)
    present = {
        "submissionIds": st.lists(sids | NON_STRINGS, max_size=MAX_IDS + 3),
        "admin": admins | NOT_NULL,
    }
    body = {
        n: draw(st.sampled_from([ABSENT, ""]) if n in missing else s) for n, s in present.items()
    }
    return _monitor(
        "missing_parameters", code, names, method="POST", url=url, json=make_body(**body)
    )


def _bad_id_lists(sids: S[str]) -> S[Any]:
    """Not a list of 1-25 non-empty strings."""
    wrong_items = st.lists(sids | NON_STRINGS | st.just(""), min_size=1, max_size=4).filter(
        lambda xs: not all(isinstance(x, str) and x for x in xs)
    )
    too_many = st.lists(sids, min_size=MAX_IDS + 1, max_size=MAX_IDS + 5)
    return st.sampled_from([[], "abc", {"0": "x"}, 7]) | too_many | wrong_items


def _all_failed(ids: list[str], admin: str, url: str) -> Invalid:
    """Only unknown submissions: the spec's own 500, the batch in the body (gaps.md)."""
    error = "Cannot find submission: {}"
    failed = [
        {"submissionId": i, "recordIds": [], "status": "failed", "error": error.format(i)}
        for i in ids
    ]
    batch = {"success": False, "successCount": 0, "failedCount": len(ids), "successResults": []}
    body = {"submissionIds": ids, "admin": admin}
    return _monitor(
        "all_failed",
        "all_submissions_failed",
        extra={**batch, "failedResults": failed},
        method="POST",
        url=url,
        json=body,
    )


@st.composite
def _wrong_method(draw: st.DrawFn, wid: str, records: S[str]) -> Invalid:
    """A method the path does not serve, or POST without a worklist id: ``invalid_path``."""
    url, methods = draw(
        st.sampled_from(
            [
                (_worklist_path(wid), operations.refused(WORKLIST)),
                (MONITOR_PATH, operations.refused(MONITOR_PATH)),
                (_worklist_path(wid, draw(records)), operations.refused(RECORD)),
            ]
        )
    )
    method = draw(st.sampled_from(methods))
    return _monitor("wrong_method", "invalid_path", method=method, url=url)


@st.composite
def _record_worklist(draw: st.DrawFn, wids: S[str], records: S[str], admins: S[str]) -> Invalid:
    """GET or DELETE of records in a worklist that does not exist."""
    kind, code, wid = "record_unknown_worklist", "invalide_worklist", draw(wids)
    if draw(st.booleans()):
        url = _worklist_path(wid, draw(records))
        return _monitor(kind, code, method="GET", url=url)
    body = {"recordIds": draw(id_lists(records)), "admin": draw(admins)}
    return _monitor(kind, code, method="DELETE", url=_worklist_path(wid), json=body)


@st.composite
def _delete_payload(draw: st.DrawFn, url: str, records: S[str], admins: S[str]) -> Invalid:
    """A DELETE body that is not JSON, or whose ``recordIds`` (checked first) or ``admin``
    is missing or malformed."""
    choice = draw(st.sampled_from(["json", "ids", "admin"]))
    if choice == "json":
        raw = draw(non_json_bodies() | json_non_objects())
        return _monitor(
            "delete_bad_payload", "invalid_payload", method="DELETE", url=url, content=raw
        )
    if choice == "ids":
        bad = st.sampled_from([ABSENT, [], "r1", 5, [1], [""]]) | st.lists(
            records, min_size=MAX_IDS + 1, max_size=MAX_IDS + 3
        )
        body = make_body(recordIds=draw(bad), admin=draw(maybe(admins | NON_STRINGS)))
    else:
        bad_admin = st.sampled_from([ABSENT, "", 5, None, ["a"]])
        body = make_body(recordIds=draw(id_lists(records)), admin=draw(bad_admin))
    return _monitor("delete_bad_payload", "invalid_payload", method="DELETE", url=url, json=body)


def _missing_records(ids: list[str], admin: str, url: str) -> Invalid:
    details = [MISSING_RECORD for _ in ids]
    body = {"recordIds": ids, "admin": admin}
    kind, code = "delete_missing_records", "missing_records"
    return _monitor(kind, code, extra={"details": details}, method="DELETE", url=url, json=body)


def _sent(
    kind: str, code: str, method: str, urls: S[str], bodies: S[Any], keys: S[Any] | None = None
) -> S[Invalid]:
    """That error for each drawn body sent to each drawn URL (with each drawn key header)."""

    def build(url: str, body: Any, headers: dict[str, str] | None) -> Invalid:
        return _monitor(kind, code, method=method, url=url, json=body, headers=headers)

    return st.builds(build, urls, bodies, keys if keys is not None else st.none())


def _registration(ids: S[Any], admins: S[Any]) -> S[dict[str, Any]]:
    return st.fixed_dictionaries({"submissionIds": ids, "admin": admins})


def _monitor_post_kinds(
    ids: tuple[S[str], S[str]], admins: tuple[S[str], S[str]], wids: dict[str, S[str]], url: str
) -> Kinds:
    """Failures of registration, in docs/gaps.md's order. ``ids``: (known, unknown)
    submission ids; ``admins``: (registered, strangers); ``wids``: worklist ids by state."""
    (sids, unknown), (team, strangers) = ids, admins
    here, anyone, any_sid = st.just(url), team | strangers, sids | unknown
    bodies = _any_monitor_body(any_sid, anyone)
    table: Kinds = {
        "wrong_api_key": _sent(
            "wrong_api_key", "invalid_project", "POST", here, bodies, wrong_keys()
        ),
        "unknown_worklist": _sent(
            "unknown_worklist",
            "unknown_worklist",
            "POST",
            wids["unknown"].map(_worklist_path),
            bodies,
        ),
        "missing_parameters": _missing_parameters(any_sid, anyone, url),
        "bad_submission_ids": _sent(
            "bad_submission_ids",
            "invalid_submissionIds",
            "POST",
            here,
            _registration(_bad_id_lists(sids), anyone | NOT_NULL),
        ),
        "bad_admin": _sent(
            "bad_admin",
            "invalid_admin",
            "POST",
            here,
            _registration(id_lists(any_sid), strangers | NOT_NULL),
        ),
        "all_failed": st.builds(_all_failed, id_lists(unknown, unique=True), team, here),
    }
    if "inactive" in wids:
        inactive = wids["inactive"].map(_worklist_path)
        table["inactive_worklist"] = _sent(
            "inactive_worklist", "invalid_worklist", "POST", inactive, bodies
        )
    return table


def _monitor_record_kinds(wid: str, unknown_wids: S[str], admins: tuple[S[str], S[str]]) -> Kinds:
    """Failures of the paths, and of reading and deleting records."""
    (team, strangers), records, url = admins, unknown_ids(()), _worklist_path(wid)
    unique_records = id_lists(records, unique=True)
    return {
        "wrong_method": _wrong_method(wid, records),
        "record_unknown_worklist": _record_worklist(unknown_wids, records, team | strangers),
        "unknown_record": records.map(
            lambda r: _monitor("unknown_record", "invalid_record", method="GET", url=f"{url}/{r}")
        ),
        "delete_bad_payload": _delete_payload(url, records, team | strangers),
        "delete_unregistered_admin": _sent(
            "delete_unregistered_admin",
            "invalid_admin",
            "DELETE",
            st.just(url),
            st.fixed_dictionaries({"recordIds": unique_records, "admin": strangers}),
        ),
        "delete_missing_records": st.builds(_missing_records, unique_records, team, st.just(url)),
    }


def invalid_monitor_requests(
    submission_ids: Sequence[str],
    admins: Sequence[str],
    *,
    worklist_id: str,
    inactive_worklist_id: str | None = None,
    kinds: Collection[str] | None = None,
) -> S[Invalid]:
    """Wrong monitoring calls and their errors (api-v3.md 7.5, gaps.md, docs/gaps.md's order).

    ``worklist_id`` must be an active worklist of the project (worklists are made through
    the control API) holding no record whose id starts with ``missing-``;
    ``inactive_worklist_id`` an inactive one, if given. Kinds of POST: wrong_api_key,
    unknown_worklist, inactive_worklist (only with ``inactive_worklist_id``),
    missing_parameters, bad_submission_ids, bad_admin, all_failed (the spec's 500),
    wrong_method; of GET and DELETE of records: record_unknown_worklist, unknown_record,
    delete_bad_payload, delete_unregistered_admin, delete_missing_records.
    """
    sids, team = given_values(submission_ids, "submission_ids"), given_values(admins, "admins")
    known = [w for w in (worklist_id, inactive_worklist_id) if w is not None]
    wids = {"unknown": unknown_ids(known, "missing-wl-")}
    if inactive_worklist_id is not None:
        wids["inactive"] = st.just(inactive_worklist_id)
    ids = (sids, unknown_ids(submission_ids))
    both = (team, unregistered_admins(admins))
    table = {
        **_monitor_post_kinds(ids, both, wids, _worklist_path(worklist_id)),
        **_monitor_record_kinds(worklist_id, wids["unknown"], both),
    }
    return pick_kinds(table, kinds, "invalid_monitor_requests")
