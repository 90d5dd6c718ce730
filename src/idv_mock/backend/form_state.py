"""The hosted form's state that the core holds for the whole service (sessions, token
uses, issued secrets) and the form's step names, without the form's flow
(``liveform_flow.py``: its steps' rules, outcomes and fields): a first use builds the
core and counts coverage by step, but opens no form, so the flow loads with the form."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from idv_mock.backend.liveform_flow import Session
    from idv_mock.backend.liveform_links import TokenUse

STEPS = ("consent", "country", "id_type", "document", "selfie", "tester", "done")
MAX_SESSIONS = 1000  # oldest dropped: a long demo cannot grow the state without end


class FormState:
    """The form's state of the whole service: sessions, token uses, issued secrets (a
    plain class: a dataclass's methods are compiled at import, a first use's cost)."""

    __slots__ = ("secrets", "sessions", "tokens")

    def __init__(self) -> None:
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.tokens: dict[tuple[str, str], TokenUse] = {}
        self.secrets: dict[str, str] = {}

    def add(self, session: Session) -> None:
        self.sessions[session.session_id] = session
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.popitem(last=False)

    def clear(self, project_id: str | None = None) -> None:
        """Forget everything (a reset), or one project's part (a project reset)."""
        if project_id is None:
            self.sessions.clear()
            self.tokens.clear()
            self.secrets.clear()
            return
        for sid in [s for s, v in self.sessions.items() if v.project_id == project_id]:
            del self.sessions[sid]
        for key in [k for k in self.tokens if k[0] == project_id]:
            del self.tokens[key]
        self.secrets.pop(project_id, None)
