"""Derived fields every creation path applies (gaps.md), and byte-identical seeding."""

from __future__ import annotations

import orjson

from idv_mock import Service, ServiceConfig


def new_project(service: Service, **options: object) -> str:
    service.create_project(
        {"project_id": "p", "api_key": "pk", "admins": ["a@b.co"], "options": options}
    )
    return "p"


def test_same_seed_same_bytes() -> None:
    a = Service(ServiceConfig(seed_count=20, random_seed=5))
    b = Service(ServiceConfig(seed_count=20, random_seed=5))
    assert orjson.dumps(a.export_state()) == orjson.dumps(b.export_state())
    assert a.create_submission("default") == b.create_submission("default")


def test_other_seed_other_data() -> None:
    a = Service(ServiceConfig(seed_count=5, random_seed=1))
    b = Service(ServiceConfig(seed_count=5, random_seed=2))
    assert a.export_state() != b.export_state()


def test_reset_returns_to_the_seeded_state_and_sequence() -> None:
    service = Service(ServiceConfig(seed_count=10))
    start = orjson.dumps(service.export_state())
    first = service.create_submission("default")
    service.create_project({"project_id": "x", "api_key": "xk"})
    service.reset(new_ids=False)  # the plugin's reset before each test
    assert orjson.dumps(service.export_state()) == start
    assert service.create_submission("default") == first
    service.reset()  # a server's reset: the same state, ids never given out before
    assert orjson.dumps(service.export_state()) == start
    assert service.create_submission("default")["submission_id"] != first["submission_id"]


def test_seeded_mix_is_realistic() -> None:
    subs = list(Service(ServiceConfig(seed_count=50)).project("default").store)
    assert {s["kyc"]["result"] for s in subs} == {"approved", "rejected"}
    assert any(s["duplicated_users"] for s in subs)
    assert any(s["duplicated_selfie_users"] for s in subs)
    assert len({s["userid"] for s in subs}) < 50
    assert len({s["email"] for s in subs}) < len({s["userid"] for s in subs}) + 10
    assert len({s["data"]["nationality"] for s in subs}) >= 4
    assert len({s["data"]["idType"] for s in subs}) >= 4
    screened = {s["aml"]["currentstatus"] for s in subs if s["aml"].get("raw_data")}
    assert screened == {s["aml"]["currentstatus"] for s in subs} == {"Not Screened"}


def test_high_recognition_score_is_reviewed_by_system(service: Service) -> None:
    sub = service.create_submission("default", {"recognition_score": "95.50"})
    assert sub["reviewer"] == "system"
    ocr = sub["ocr"]
    assert sub["review"]["fullName"] == ocr["fullName"]
    assert sub["review"]["birthDate"] == ocr["birthDate"]
    assert sub["review"]["documentNumber"] == sub["data"]["documentNumber"]


def test_low_recognition_score_is_not_auto_reviewed(service: Service) -> None:
    sub = service.create_submission("default", {"recognition_score": "80.00"})
    assert sub["reviewer"] == ""
    assert sub["review"] == {}


def test_masking_options_keep_the_last_four(service: Service) -> None:
    pid = new_project(service, option_mask_documentNumber=True, option_mask_idNumber=True)
    sub = service.create_submission(
        pid, {"data": {"documentNumber": "M12345678", "identityNumber": "900101-1234567"}}
    )
    assert sub["data"]["documentNumber"] == "*****5678"
    assert sub["data"]["identityNumber"] == "**********4567"
    assert sub["project_options"]["option_mask_documentNumber"] is True


def test_no_masking_by_default(service: Service) -> None:
    sub = service.create_submission("default", {"data": {"documentNumber": "M12345678"}})
    assert sub["data"]["documentNumber"] == "M12345678"


def test_pre_verification_ip_is_masked(service: Service) -> None:
    sub = service.create_submission("default", {"pre_verification": {"ip_address": "203.0.113.77"}})
    assert sub["pre_verification"]["ip_address"] == "203.0.113.***"


def test_project_options_mirror_the_project(service: Service) -> None:
    pid = new_project(service, webhook_url="http://127.0.0.1:9/hook", policy_ageLimit=21)
    sub = service.create_submission(pid)
    opts = sub["project_options"]
    assert opts["webhookURL"] == "http://127.0.0.1:9/hook"
    assert opts["webhook"]["url"] == "http://127.0.0.1:9/hook"
    assert opts["webhook"]["members"][0]["email"] == "a@b.co"
    assert opts["policy_ageLimit"] == 21


def test_duplicate_identity_is_listed(service: Service) -> None:
    pid = new_project(service)
    ident = {"full_name": "Kim Min", "date_of_birth": "1991-03-04", "nationality": "KOR"}
    first = service.create_submission(pid, {"data": ident})
    second = service.create_submission(pid, {"data": ident})
    assert second["duplicated_users"] == [first["submission_id"]]
    assert first["duplicated_users"] == []


def test_duplicate_identity_number_and_custom_fields(service: Service) -> None:
    pid = new_project(service)
    first = service.create_submission(pid, {"data": {"identityNumber": "X1", "cf1": "C-1"}})
    second = service.create_submission(pid, {"data": {"identityNumber": "X1", "cf1": "C-1"}})
    assert second["duplicated_users"] == [first["submission_id"]]
    assert second["custom_duplicated_information"] == "cf1"


def test_duplicate_selfie(service: Service) -> None:
    pid = new_project(service)
    first = service.create_submission(pid)
    second = service.create_submission(
        pid, {"image": {"selfieImage": first["image"]["selfieImage"]}}
    )
    assert second["duplicated_selfie_users"] == [first["submission_id"]]
    assert second["duplicated_users"] == []


def test_duplicates_never_cross_projects(service: Service) -> None:
    pid = new_project(service)
    ident = {"full_name": "Kim Min", "date_of_birth": "1991-03-04", "nationality": "KOR"}
    service.create_submission("default", {"data": ident})
    assert service.create_submission(pid, {"data": ident})["duplicated_users"] == []


def test_masked_numbers_ending_alike_are_not_duplicates(service: Service) -> None:
    pid = new_project(service, option_mask_idNumber=True)
    service.create_submission(pid, {"data": {"identityNumber": "111-11-1234"}})
    other = service.create_submission(pid, {"data": {"identityNumber": "999-99-1234"}})
    assert other["data"]["identityNumber"] == "*******1234"
    assert other["duplicated_users"] == []


def test_identical_masked_numbers_are_duplicates(service: Service) -> None:
    pid = new_project(service, option_mask_idNumber=True)
    first = service.create_submission(pid, {"data": {"identityNumber": "111-11-1234"}})
    again = service.create_submission(pid, {"data": {"identityNumber": "111-11-1234"}})
    assert again["duplicated_users"] == [first["submission_id"]]


def test_duplicate_index_survives_export_and_import(service: Service) -> None:
    pid = new_project(service, option_mask_idNumber=True)
    first = service.create_submission(pid, {"data": {"identityNumber": "111-11-1234"}})
    service.import_state(service.export_state())
    again = service.create_submission(pid, {"data": {"identityNumber": "111-11-1234"}})
    assert again["duplicated_users"] == [first["submission_id"]]


def test_review_copies_ocr_even_when_data_is_masked(service: Service) -> None:
    pid = new_project(service, option_mask_idNumber=True)
    sub = service.create_submission(
        pid, {"recognition_score": "95.00", "data": {"identityNumber": "111-11-1234"}}
    )
    assert sub["review"]["identityNumber"] == sub["ocr"]["identityNumber"] == "111-11-1234"
    assert sub["data"]["identityNumber"] == "*******1234"


def test_a_score_that_is_not_a_number_is_not_auto_reviewed(service: Service) -> None:
    assert service.create_submission("default", {"recognition_score": "NaN"})["reviewer"] == ""


def test_age_group_is_the_vendors_from_the_date_of_birth() -> None:
    """webhooks.md: minor (13 or younger), early-teen (14-15), teen (16-17), adult (18+)."""
    service = Service(ServiceConfig(seed_count=10))
    state = service.export_state()
    groups = {s["data"]["age_group"] for p in state["projects"] for s in p["submissions"]}
    assert groups == {"adult"}  # seeded people are 19 to 75
    now = service.clocks.handle("default").now
    for years_before, expected in ((13, "minor"), (14, "early-teen"), (16, "teen"), (18, "adult")):
        born = f"{now.year - years_before:04d}-01-01"
        made = service.create_submission("default", {"data": {"date_of_birth": born}})
        assert (made["data"]["date_of_birth"], made["data"]["age_group"]) == (born, expected)
    kept = service.create_submission("default", {"data": {"age_group": "N/A"}})
    assert kept["data"]["age_group"] == "N/A"
