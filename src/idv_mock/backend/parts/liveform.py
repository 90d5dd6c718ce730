"""The hosted form (Liveform): links opened, sessions and their steps, token rules.

``service.liveform``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``, its ``Clocks`` (a form's touch runs what fell due; the part's two rules,
``token_expiry`` and ``incomplete_timeout``, are registered there) and the service's
checked creation of a submission. The web form and the control API's
``hosted-submissions`` call share ``_hosted_create`` and the token rules, so a scenario
that shortcuts the form gets what the form would have made.
"""

from __future__ import annotations

import copy
import ipaddress
import secrets
import uuid
from collections.abc import Callable, Container, Iterable
from datetime import datetime, timedelta
from typing import Any, ClassVar

from idv_mock.backend import events, liveform_flow, liveform_links, views
from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import InvalidInput, NotFound
from idv_mock.backend.liveform_flow import Session, StepInputError
from idv_mock.backend.liveform_links import Link, Refused, TokenUse
from idv_mock.backend.parts.clocks import Clocks
from idv_mock.backend.projections import Policy
from idv_mock.backend.projects import Project
from idv_mock.fake import codes
from idv_mock.fake.factory import deep_merge
from idv_mock.ground import crypto, schemas
from idv_mock.ground.clock import client_time, iso, parse_instant, stamp

Submission = dict[str, Any]
# the service's checked creation: a project, overrides and the mirrored project options,
# and (keywords) ``invent`` and ``tries`` (``SubmissionFactory.build``)
Create = Callable[..., Submission]
TRUE = ("on", "true", "yes", "1")


class Liveform:
    """Each project's hosted form: secrets, sessions, steps and the submissions they make."""

    def __init__(self, core: Core, clocks: Clocks, create: Create) -> None:
        self.core = core
        self.clocks = clocks
        self.create = create

    # --- public operations ---
    def issue_secret(self, project_id: str) -> str:
        """A new secret key for the project's form links (the previous one stops working).

        Returned once: nothing reads it back, as the vendor's console shows it once.
        """
        with self.core.lock:
            self.core.project(project_id)
            secret = secrets.token_urlsafe(24)
            self.core.forms.secrets[project_id] = secret
            return secret

    def open(self, project_id: str, pairs: Iterable[tuple[str, str]], ip: str = "") -> Session:
        """An applicant opens a link: read it, apply the token rules, start a session.
        ``ip``: the applicant's address (the ``ipAddress`` of the form's webhooks)."""
        with self.core.lock:
            project = self._form_project(project_id)
            self.clocks.catch_up(project)
            link = self._read_link(project, pairs)
            _check_open(project, link)
            self._check_token(project, link)
            self._form_policy(project, link)
            target = self._injection_target(project, link)
            self._first_use(project, link)  # only now: a refused link changes nothing
            session = Session(uuid.uuid4().hex, link, ip=_ipv4(ip))
            liveform_flow.first_step(session)
            if target is not None:  # data injection: the address step for that submission
                session.injection, session.step = True, "address"
                session.submission_id = str(target["submission_id"])
                session.kyc_status = str((target.get("kyc") or {}).get("result", ""))
            self.core.forms.add(session)
            return copy.deepcopy(session)

    def session(self, session_id: str) -> Session:
        with self.core.lock:
            return copy.deepcopy(self._session(session_id))

    def return_url(self, project_id: str, values: dict[str, str]) -> str | None:
        """Where the form sends the applicant back (option ``return_url``), or None."""
        with self.core.lock:
            project = self.core.projects.get(project_id)
            url = None if project is None else project.options.get("return_url")
        return liveform_links.with_query(str(url), values) if url else None

    def choices(self, session_id: str) -> dict[str, list[str]]:
        """What the country and ID type steps offer the session's applicant."""
        with self.core.lock:
            session = self._session(session_id)
            project = self._form_project(session.project_id)
            return {
                "countries": offered_countries(project, session.link),
                "id_types": offered_id_types(project, session.link),
            }

    def step(self, session_id: str, step: str, form: dict[str, str]) -> Session:
        """The applicant sends a step's form; a step that is not the current one is ignored.

        Raises ``StepInputError`` for input the page asks to correct (nothing changes) and
        ``Refused`` when the token expired before the form completed.
        """
        with self.core.lock:
            session = self._session(session_id)
            if session.blocked:
                raise Refused(session.blocked, known=session.link.returned())
            if session.step == step and step in self._STEP_HANDLERS:
                project = self._form_project(session.project_id)
                self.clocks.catch_up(project)
                if session.step != step:  # the form timed out meanwhile
                    return copy.deepcopy(session)
                self._STEP_HANDLERS[step](self, project, session, form)
            return copy.deepcopy(session)

    def hosted_submission(
        self,
        project_id: str,
        token: str,
        outcome: str,
        overrides: dict[str, Any] | None = None,
    ) -> Submission:
        """The control API's shortcut of the form: ``token`` is the link's ``encrypted``
        value; the same link, token and projection rules, then the same creation."""
        with self.core.lock:
            project = self.core.project(project_id)
            if outcome not in liveform_flow.OUTCOMES:
                raise InvalidInput("outcome must be approved, rejected or pending")
            self.clocks.catch_up(project)
            link = self._read_link(project, [("encrypted", token)])
            self._check_token(project, link)
            return self._hosted_create(project, link, outcome, overrides or {})

    # --- the link ---
    def _form_project(self, project_id: str) -> Project:
        try:
            return self.core.project(project_id)
        except NotFound:
            raise Refused("bad-path") from None

    def _read_link(self, project: Project, pairs: Iterable[tuple[str, str]]) -> Link:
        only = bool(project.options.get("liveform_encrypted_only"))
        now = client_time(project.clock)  # real time, unless a test froze or moved the clock
        decrypt = self._decryptor(project)
        return liveform_links.read_link(
            project.project_id, pairs, decrypt, encrypted_only=only, now=now
        )

    def _decryptor(self, project: Project) -> Callable[[str], Any]:
        options = project.options
        key, derivation = project.api_key, project.derivation
        if options.get("liveform_key") == "secret":
            found = self.core.forms.secrets.get(project.project_id)
            key, derivation = found or "", "sha256"
        gcm = options.get("liveform_cipher") == "gcm"

        def decrypt(text: str) -> Any:
            if not key:
                raise Refused("no-secret")
            return (crypto.decrypt_gcm if gcm else crypto.decrypt)(text, key, derivation)

        return decrypt

    def _form_policy(self, project: Project, link: Link) -> Policy | None:
        """The projection the link names; an unknown one refuses the link."""
        try:
            if "projectionId" in link.values:
                return project.projections.get(link.values["projectionId"])
            if "projectionName" in link.values:
                return project.projections.by_name(link.values["projectionName"])
        except NotFound:
            raise Refused("unknown-projection", known=link.returned()) from None
        return None

    # --- data injection (action=addveri) ---
    def _injection_target(self, project: Project, link: Link) -> Submission | None:
        """The submission an injection link names (``sid``), or None for a KYC link."""
        if link.get("action") != "addveri":
            return None
        sid = link.get("sid")
        if not sid:
            raise Refused("injection-missing", known=link.returned())
        found = project.store.get(sid)
        if found is None or found.get("status") == "Deleted Submission":
            raise Refused("invalid-submission", known=link.returned())
        return found

    def _address(self, project: Project, session: Session, form: dict[str, str]) -> None:
        """The injection step: the address, and the tester panel's result (success, or
        one of the vendor's failCodes, which sends ``injectionFail``)."""
        address = liveform_flow.injected_address(form, schemas.countries())
        results = liveform_flow.INJECTION_RESULTS
        result = liveform_flow.choose(form.get("result") or "success", results, "result")
        sub = self._injection_target(project, session.link)
        assert sub is not None  # an injection session's link names its submission
        at = stamp(project.clock.now())
        cf = {k: session.link.values[k] for k in events.CF_KEYS if k in session.link.values}
        if result != liveform_flow.INJECTION_SUCCESS:
            self.core.fire(project, [events.injection_event(sub, at, cf, fail_code=result)])
            raise Refused("injection-failed", known=session.link.returned())
        new = liveform_flow.injected(sub, address, cf, at)
        self.core.changes += 1
        project.store.replace(new)
        self.core.fire(project, [events.injection_event(new, at, cf)])
        session.step = "injected"

    # --- tokens ---
    def _check_token(self, project: Project, link: Link) -> None:
        """Private mode needs a token; an expired or used one is TK-10001 (time wins)."""
        token = link.get("token")
        if not token:
            if project.options.get("liveform_private_mode"):
                raise Refused("token-required", known=link.returned())
            return
        if _pooled_only(project) and token not in project.tokens:
            raise Refused("token-unregistered", known=link.returned())
        key = (project.project_id, token)
        use = self.core.forms.tokens.get(key)
        lifetime = self._token_lifetime(project)
        now = project.clock.peek()
        condition = liveform_links.token_expiry(use, now, lifetime)
        if use is not None and condition is not None:
            at = use.first_used + lifetime if condition == "time" else now
            self._token_expired(project, token, use, condition, at)
            raise Refused("token-expired", known=link.returned())

    def _first_use(self, project: Project, link: Link) -> None:
        """The token's clock starts when its link is first opened; its expiry falls due
        ``token_expiry_seconds`` later."""
        token = link.get("token")
        if token and (project.project_id, token) not in self.core.forms.tokens:
            use = self.core.forms.tokens[(project.project_id, token)] = TokenUse(
                project.clock.now()
            )
            at = use.first_used + self._token_lifetime(project)
            project.schedule.add(at, "token_expiry", {"token": token})

    @staticmethod
    def _token_lifetime(project: Project) -> timedelta:
        return timedelta(seconds=project.seconds("token_expiry_seconds"))

    def _token_expired(
        self, project: Project, token: str, use: TokenUse, condition: str, at: datetime
    ) -> list[str]:
        """The token's one ``token_expired`` (option ``token_expiry_webhook``), at ``at``:
        the instant it expired by time, or the instant its one use completed (count; a
        used token found again, e.g. restored from a state saved before, says so then)."""
        project.schedule.remove("token_expiry", token=token)  # found before it fell due
        if use.expiry_sent or not project.options.get("token_expiry_webhook"):
            return []
        use.expiry_sent = True
        self.core.fire(project, [events.token_expired_event(token, condition, iso(at))])
        return ["token_expired"]

    def expire_token(self, project: Project, detail: dict[str, Any], at: datetime) -> list[str]:
        """The rule ``token_expiry``: the token's lifetime ended at ``at``."""
        token = str(detail["token"])
        key = (project.project_id, token)
        use = self.core.forms.tokens.get(key)
        if use is None:  # a restart forgot the use, not the expiry
            use = self.core.forms.tokens[key] = TokenUse(at - self._token_lifetime(project))
        return self._token_expired(project, token, use, "time", at)

    def time_out_form(self, project: Project, detail: dict[str, Any], at: datetime) -> list[str]:
        """The rule ``incomplete_timeout``: a form nobody finished turns ``rejected``
        (``commentCode`` ``timeout``), sending ``rejected`` only."""
        sid = str(detail["submission_id"])
        session = self.core.forms.sessions.get(str(detail.get("session_id", "")))
        if sid in project.store or (session is not None and session.step == "done"):
            return []
        link = session.link if session else Link(project.project_id, values=detail.get("link", {}))
        overrides = liveform_flow.submission_overrides(session) if session else {}
        overrides["submission_id"] = sid
        # it came into being when the document step began, and was decided now
        began = parse_instant(str(detail.get("created_at", ""))) or at
        overrides.update(created_at=stamp(began), kyc_result_at=stamp(at), updated_at=stamp(at))
        retry_codes = session.retry_codes if session else []
        retry = liveform_flow.kyc_part("", "", retry_codes)["retry"]
        overrides["kyc"] = {**codes.reject("timeout"), "retry": retry}
        # the attempts it made: each redone one, and the last when its selfie was taken
        tries = len(retry_codes) + (1 if session is not None and session.step == "tester" else 0)
        sent: list[str] = []
        sub = self._hosted_create(
            project, link, "rejected", overrides, only="rejected", sent=sent, tries=tries
        )
        if session is not None:
            session.step, session.kyc_status = "done", str(sub["kyc"]["result"])
        return (["rejected"] if project.options.get("webhook_url") else []) + sent

    # --- the flow's steps ---
    def _consent(self, project: Project, session: Session, form: dict[str, str]) -> None:
        if form.get("agree", "").lower() not in TRUE:
            raise StepInputError("agree")
        self._advance(project, session, "consent")

    def _country(self, project: Project, session: Session, form: dict[str, str]) -> None:
        offered = offered_countries(project, session.link)
        session.country = liveform_flow.choose(form.get("country", ""), offered, "country")
        self._advance(project, session, "country")

    def _id_type(self, project: Project, session: Session, form: dict[str, str]) -> None:
        offered = offered_id_types(project, session.link)
        session.id_type = liveform_flow.choose(form.get("id_type", ""), offered, "id_type")
        self._advance(project, session, "id_type")

    def _document(self, project: Project, session: Session, form: dict[str, str]) -> None:
        confirmed = liveform_flow.confirmed_fields(session.link)
        session.document = liveform_flow.edited_document(session.document, form, confirmed)
        session.notice = ""
        self._advance(project, session, "document")

    def _selfie(self, project: Project, session: Session, form: dict[str, str]) -> None:
        self._advance(project, session, "selfie")

    def _tester(self, project: Project, session: Session, form: dict[str, str]) -> None:
        outcome = liveform_flow.choose(form.get("outcome", ""), liveform_flow.OUTCOMES, "outcome")
        reason = liveform_flow.choose(
            form.get("reason") or "other", list(liveform_flow.REASONS), "reason"
        )
        if form.get("fail_once", "").lower() in TRUE:
            code = liveform_flow.choose(
                form.get("retry_code") or "recognition_fail", events.RETRY_CODES, "retry_code"
            )
            loop = liveform_flow.count_failure(session, code)
            if len(session.retry_codes) + 1 < codes.MAX_ATTEMPTS:
                session.retry_codes.append(code)
                session.retries = len(session.retry_codes)
                session.step, session.notice = "document", "retry"
                self._fire_flow(project, session, "retry", code)
                return
            # the third failed attempt rejects (too_many_retry); when it was the same
            # error all three times the applicant sees the loop page instead of the result
            outcome, reason = "rejected", codes.TOO_MANY
        else:
            loop = ""
        self._check_token(project, session.link)
        overrides = liveform_flow.submission_overrides(session)
        overrides = deep_merge(overrides, liveform_flow.entered(form))
        age_limit = float(project.options.get("policy_ageLimit") or 0) or None
        overrides["kyc"] = liveform_flow.kyc_part(outcome, reason, session.retry_codes, age_limit)
        if session.created_at:  # it came into being when the document step began
            overrides["created_at"] = session.created_at
        tries = len(session.retry_codes) + 1
        sub = self._hosted_create(project, session.link, outcome, overrides, tries=tries)
        project.schedule.remove("incomplete_timeout", submission_id=session.submission_id)
        session.kyc_status = str(sub["kyc"]["result"])
        session.step = "done"
        if loop:
            raise Refused(loop, known=session.returned())

    _STEP_HANDLERS: ClassVar[
        dict[str, Callable[[Liveform, Project, Session, dict[str, str]], None]]
    ] = {
        "consent": _consent,
        "country": _country,
        "id_type": _id_type,
        "document": _document,
        "selfie": _selfie,
        "tester": _tester,
        "address": _address,
    }

    def _advance(self, project: Project, session: Session, step: str) -> None:
        session.step = liveform_flow.after(session, step)
        if session.step == "document" and not session.submission_id:
            self._start_document(project, session)

    def _start_document(self, project: Project, session: Session) -> None:
        """Reserve the submission's id, fill the sample document, send ``created``."""
        reserved = {s.submission_id for s in self.core.forms.sessions.values()}
        session.submission_id = self.core.fresh_uuid(_Either(project.store.blobs, reserved))
        now = project.clock.now()
        identity = self.core.factory.identity(now, {"nationality": session.country})
        session.document = liveform_flow.prefill(identity)
        session.created_at = stamp(now)
        at = now + timedelta(seconds=project.seconds("incomplete_timeout_seconds"))
        detail = {"submission_id": session.submission_id, "session_id": session.session_id}
        detail["created_at"] = iso(now)
        project.schedule.add(
            at, "incomplete_timeout", {**detail, "link": dict(session.link.values)}
        )
        self._fire_flow(project, session, "created")

    def _fire_flow(
        self, project: Project, session: Session, trigger: str, retry_code: str = ""
    ) -> None:
        """``created`` or ``retry``, filtered by the projection the link names."""
        policy = self._form_policy(project, session.link)
        hidden = list(policy.fields) if policy is not None else None
        projection = None
        if policy is not None:
            projection = {"projectionId": policy.projection_id, "projectionName": policy.name}
        event = events.flow_event(
            trigger, session.submission_id, _flow_values(session),
            retry_code=retry_code, attempts=session.retries if retry_code else 0,
            hidden=hidden, style=str(project.options["projection_style"]), projection=projection,
        )  # fmt: skip
        self.core.fire(project, [event])

    def incomplete(self, project: Project, sid: str) -> Submission | None:
        """The submission ``sid`` while its form is open (from ``created`` to its result),
        as a read shows it; None when no open form of ``project`` reserved that id."""
        if sid in project.store:
            return None
        for session in self.core.forms.sessions.values():
            if (
                session.submission_id == sid
                and session.project_id == project.project_id
                and not session.injection
                and session.step != "done"
            ):
                view = liveform_flow.incomplete_view(session)
                policy = self._form_policy(project, session.link)
                if policy is not None:
                    style = str(project.options["projection_style"])
                    view = views.projected(view, list(policy.fields), style, reduced=False)
                return view
        return None

    def _session(self, session_id: str) -> Session:
        found = self.core.forms.sessions.get(session_id)
        if found is None:
            raise Refused("page-not-found")
        return found

    # --- the creation both paths share ---
    def _hosted_create(
        self,
        project: Project,
        link: Link,
        outcome: str,
        overrides: dict[str, Any],
        only: str | None = None,
        sent: list[str] | None = None,
        tries: int = 1,
    ) -> Submission:
        """The submission the form completes: link metadata, policy switches, projection,
        token; then ``submit`` and the result are sent (``only``: just that trigger), then
        the token's ``token_expired`` by count (added to ``sent``).

        Nothing is invented: ``userid``, ``email``, ``cf1``-``cf3`` and ``tokenId`` come
        from the link (or the overrides), the rest only when the applicant entered it;
        ``tries``: the attempts the applicant made.
        """
        policy = self._form_policy(project, link)
        outcome, overrides = _duplicate_rule(project, link, outcome, overrides)
        merged = deep_merge(overrides, {"kyc": {"result": outcome}})
        merged.update({k: link.values[k] for k in ("userid", "email") if k in link.values})
        cf = {k: link.values[k] for k in ("cf1", "cf2", "cf3") if k in link.values}
        if cf:
            merged["data"] = {**(merged.get("data") or {}), **cf}
        token = link.get("token")
        if token:
            merged["tokenId"] = token
        if policy is not None:
            merged["projection"] = {
                "projectionId": policy.projection_id,
                "projectionName": policy.name,
            }
        mirrored = liveform_links.policies(project.project_options(), link)
        sub = self.create(project, merged, mirrored, invent=False, tries=tries)
        if token:
            use = self.core.forms.tokens.setdefault(
                (project.project_id, token), TokenUse(project.clock.peek())
            )
            use.submission_id = sub["submission_id"]
        hidden = None
        if policy is not None:
            hidden = project.projections.applied[sub["submission_id"]] = list(policy.fields)
        style = str(project.options["projection_style"])
        batch = events.creation_events(sub, hidden, style)
        self.core.fire(project, [e for e in batch if only in (None, e.trigger)])
        if token:  # its one allowed use is complete: it expires now, by count
            expired = self._token_expired(project, token, use, "count", project.clock.peek())
            if sent is not None:
                sent += expired
        return sub


def _ipv4(text: str) -> str:
    """``text`` when it is an IPv4 address (what a submission's ``ip_address`` holds), else
    empty (an in-process client's host is a name)."""
    try:
        return text if ipaddress.ip_address(text).version == 4 else ""
    except ValueError:
        return ""


def _flow_values(session: Session) -> dict[str, str]:
    """What ``created`` and ``retry`` carry of the session: the link's values, its token,
    the applicant's IP."""
    return {
        **session.link.returned(),
        "tokenId": session.link.get("token"),
        "ipAddress": session.ip,
    }


class _Either:
    """Taken in either collection (the store's ids, ids reserved by open sessions)."""

    def __init__(self, *parts: Container[str]) -> None:
        self.parts = parts

    def __contains__(self, item: object) -> bool:
        return any(item in part for part in self.parts)


def _check_open(project: Project, link: Link) -> None:
    """A closed project (option ``project_status`` ``CLOSE``) or an emergency stop (option
    ``submission_control``) takes no submission: the vendor's general error pages."""
    if project.options.get("project_status") == "CLOSE":
        raise Refused("project-closed", known=link.returned())
    if project.options.get("submission_control") == "emergency_stop":
        raise Refused("service-blocked", known=link.returned())


def _pooled_only(project: Project) -> bool:
    """Private mode with Token ID Pre-registration: only the pool's tokens open the form."""
    options = project.options
    return bool(options.get("liveform_private_mode") and options.get("token_preregistration"))


def offered_id_types(project: Project, link: Link) -> list[str]:
    """The project's accepted ID types, only those of ``allowedIdTypes`` when the link
    names them (in the link's order)."""
    accepted = list(project.options["policy_acceptedID"])
    allowed = link.listed("allowedIdTypes")
    return accepted if allowed is None else [t for t in allowed if t in accepted]


def offered_countries(project: Project, link: Link) -> list[str]:
    """The link's countries less the project's blacklist (unless the link turns it off)."""
    countries = link.countries()
    if link.get("blacklistCountries") == "false":
        return countries
    blocked = set(project.options.get("policy_blacklistCountries") or [])
    return [c for c in countries if c not in blocked]


def _duplicate_rule(
    project: Project, link: Link, outcome: str, overrides: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``rejectDuplicateUser=true``: a user id the project already has is rejected."""
    userid = link.get("userid")
    if link.get("rejectDuplicateUser") != "true" or not project.store.by_user.get(userid):
        return outcome, overrides
    return "rejected", deep_merge(overrides, {"kyc": codes.reject("duplicate_user")})
