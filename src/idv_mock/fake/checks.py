"""The verification record of a generated submission: KYC attempts, face-age checks,
capture signals and pre-verification, as the applicant's flow would have left them."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta
from typing import Any

from idv_mock.fake import codes
from idv_mock.fake.draws import Draws, round2
from idv_mock.ground.clock import iso, stamp

# where a nationality is no ISO 3166-1 alpha-3 code (the control API stores any three
# capital letters, so that AML's invalid_country is reachable), the fields whose schema
# demands a real code (the document's issuing country, the IP's country) get this one:
# the country of the en_US names and address an unknown nationality gets (factory.py)
FALLBACK_COUNTRY = "USA"

IMAGE_HOST = "https://storage.idv-mock.local"


class CheckParts(Draws):
    """Builders of the check parts; the submission factory adds identity and data."""

    # the moment ``_iso_after`` and ``_stamp_after`` were last asked about, in parts: its
    # date, its second of the day and its milliseconds (see there)
    _parts_of: tuple[datetime | None, str, int, str] = (None, "", 0, "")

    def _iso_after(self, when: datetime, seconds: int) -> str:
        """``iso(when + timedelta(seconds=seconds))``: a submission holds a dozen times a
        few minutes before its ``when``, so ``when`` is formatted once and each of them put
        together from its date, a table's hours and minutes, and its milliseconds."""
        day, at, ms = self._moment_parts(when, seconds)
        if 0 <= at < 86_400:  # the same day
            return f"{day}T{_HOURS_MINUTES[at // 60]}:{_SECONDS[at % 60]}.{ms}Z"
        return iso(when + timedelta(seconds=seconds))

    def _stamp_after(self, when: datetime, seconds: int) -> str:
        """``stamp(when + timedelta(seconds=seconds))``, as ``_iso_after`` makes it."""
        day, at, ms = self._moment_parts(when, seconds)
        if 0 <= at < 86_400:
            return f"{day}-{_HOURS_MINUTES_DASHED[at // 60]}-{_SECONDS[at % 60]}-{ms}"
        return stamp(when + timedelta(seconds=seconds))

    def _moment_parts(self, when: datetime, seconds: int) -> tuple[str, int, str]:
        moment, day, second, ms = self._parts_of
        if moment is not when:
            text = when.isoformat(timespec="milliseconds")  # YYYY-MM-DDTHH:MM:SS.mmm
            moment, day, ms = when, text[:10], text[20:23]
            second = when.hour * 3600 + when.minute * 60 + when.second
            self._parts_of = (moment, day, second, ms)
        return day, second + seconds, ms

    def _kyc(
        self, ident: dict[str, str], result: str, when: datetime, sid: str, tries: int | None = None
    ) -> dict[str, Any]:
        """``tries``: the attempts the applicant made (the hosted form knows), else drawn."""
        if tries is None:
            tries = self.rng.weighted((1, 2, 3), (6, 9, 10))  # 6:3:1
        attempts = [self._attempt(i + 1, ident, when, sid) for i in range(tries)]
        retry = [codes.retry_entry(i, "recognition_fail") for i in range(1, tries)]
        rejected = result == "rejected"
        # three tries that end rejected: the third failed (the vendor's three-attempt rule);
        # fewer: a reviewer's decision (``other``, the values api-v3.md has seen)
        code = codes.TOO_MANY if tries == codes.MAX_ATTEMPTS else "other"
        reason = codes.reject(code) if rejected else {"comment": [], "commentCode": []}
        return {"result": result, **reason, "attempts": attempts, "retry": retry}

    def _attempt(self, n: int, ident: dict[str, str], when: datetime, sid: str) -> dict[str, Any]:
        start = -90 * (4 - n)  # seconds before ``when``
        draw = self.rng.random
        return {
            "attemptCnt": n,
            "step1Time1st": self._iso_after(when, start),
            "step2Time1st": self._iso_after(when, start + self.rng.randint(10, 60)),
            "ocrResult": "success",
            "verificationResult": "success",
            "verification": {
                "result": {
                    "code": "0000",
                    "message": "success",
                    "transactionId": self.hex(20),
                    "extraMessage": "",
                },
                "data": {
                    "resAuthenticity": "1",
                    "resExpirationDate": "1",
                    "resNationality": ident["nationality"],
                    "resAuthenticityDesc": "genuine",
                    "resStatus": "valid",
                },
                "userName": ident["full_name"],
            },
            "verificationParams": {
                "idType": ident["idType"],
                "nationality": ident["nationality"],
                "birthDate": ident["date_of_birth"],
                "documentNumber": ident["documentNumber"],
            },
            # score(0.6, 0.99), score(0.7, 0.99) three times, score(0.5, 0.99), inlined
            "faceSimilarityScore": round2(0.6 + _SPAN_60 * draw()),
            "selfieImage": f"{IMAGE_HOST}/{sid}/selfie_{n}.jpg",
            "livenessScore": round2(0.7 + _SPAN_70 * draw()),
            "liveness": {
                "score": round2(0.7 + _SPAN_70 * draw()),
                "probability": round2(0.7 + _SPAN_70 * draw()),
                "quality": round2(0.5 + _SPAN_50 * draw()),
            },
        }

    def _verification(self, ident: dict[str, str], when: datetime) -> dict[str, Any]:
        age = when.year - int(ident["date_of_birth"][:4])
        low, high = age - self.rng.randint(1, 5), age + self.rng.randint(1, 6)
        used = {
            "selfieLow": low,
            "selfieMedian": (low + high) // 2,
            "selfieHigh": high,
            "idLow": low - 1,
            "idMedian": (low + high) // 2,
            "idHigh": high + 1,
            "birthDateAge": age,
            "originalSelfieLow": low,
            "originalSelfieMedian": (low + high) // 2,
            "originalSelfieHigh": high,
        }
        ok = {"result": True, "processed": True, "statement": "age >= 19"}
        skipped = {"result": False, "processed": False, "statement": ""}
        matches = {
            "idCardCustomMatch": skipped,
            "faceImageBirthDateMatch": ok,
            "faceImageCustomMatch": skipped,
            "idCardBirthDateMatch": ok,
        }
        condition = {
            "condition": {
                "comparisonOperator": "gte",
                "target": self.rng.choice(("high", "median")),
            },
            "matchResults": matches,
            "conditionIndex": 0,
            "finalResult": True,
        }
        return {
            "faceAge": [
                {"usedValues": used, "conditionResults": [condition], "logicalOperators": ["or"]}
            ]
        }

    def _signals(self, when: datetime) -> dict[str, Any]:
        at = self._iso_after
        click = -_BEFORE_CLICK  # seconds before ``when``
        camera = [
            {
                "processStartTime": at(when, click + start),
                "processEndTime": at(when, click + end),
                "type": step,
                "error": None,
            }
            for step, start, end in _CAMERA_STEPS
        ]
        draw = self.rng.random  # score(0.7, 1.0) for each, inlined
        conf = {k: round2(0.7 + _SPAN_70_100 * draw()) for k in _CONFIDENT}
        age = self.rng.randint(20, 60)
        return {
            "faceAge": [
                {"ageRange": {"high": age + 4, "median": age, "low": age - 4}, "source": "selfie"}
            ],
            "cameraProcessInfo": camera,
            "startButtonClickTime": at(when, click),
            "confidence": {
                "finalData": conf,
                "ocrData": dict(conf),
                "ocrExtractedData": dict(conf),
            },
        }

    def _pre_verification(self, ip: str, ident: dict[str, str], when: datetime) -> dict[str, Any]:
        return {
            "request_id": self.uuid(),
            "created_at": self._stamp_after(when, -320),
            "ip_address": ip,
            "fraud_score": self.score(0, 40),
            "attempts_frequency": "FirstSeen",
            "country_code": real_country(ident["nationality"]),
            "connection_type": self.rng.choice(("Mobile", "Mobile", "Residential")),
            "is_valid": True,
        }


# the factors ``Draws.score(low, high)`` multiplies its draw by, computed as it computes them
_SPAN_60, _SPAN_70, _SPAN_50 = 0.99 - 0.6, 0.99 - 0.7, 0.99 - 0.5
_SPAN_70_100 = 1.0 - 0.7
_CONFIDENT = ("full_name", "date_of_birth", "documentNumber")
_BEFORE_CLICK = 300  # seconds
_CAMERA_STEPS = tuple(
    (step, 20 * i + 5, 20 * i + 15)
    for i, step in enumerate(
        ("idcard-front-capture", "idcard-back-capture", "id-document-face-active")
    )
)


_HOURS_MINUTES = tuple(f"{h:02d}:{m:02d}" for h in range(24) for m in range(60))
_HOURS_MINUTES_DASHED = tuple(f"{h:02d}-{m:02d}" for h in range(24) for m in range(60))
_SECONDS = tuple(f"{s:02d}" for s in range(60))


@functools.lru_cache(maxsize=1024)  # asked twice a submission, of a dozen codes
def real_country(code: str) -> str:
    """``code`` when it is an ISO 3166-1 alpha-3 code, else :data:`FALLBACK_COUNTRY`."""
    from idv_mock.ground import schemas  # loaded on first use

    return code if code in schemas.countries() else FALLBACK_COUNTRY
