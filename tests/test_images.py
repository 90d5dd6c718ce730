"""GET /v3/image and PUT /v3/submission/image (endpoints.md 6, 7, 10.4).

The sample images each submission carries (the same bytes for the same seed), the images
an integrator puts (multipart Base64 fields or file parts), every PUT message over HTTP,
the mock's own GET errors, and what partial delete and delete leave.
"""

from __future__ import annotations

import base64
import struct
import zlib

import httpx
import pytest

from conftest import ADMIN, API_KEY, assert_refused, some_submission
from idv_mock import Service, ServiceConfig
from idv_mock.backend import images

GET_URL = "/v3/image"
PUT_URL = "/v3/submission/image"
PNG = images.sample("any-id", "idImage")
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 32


def coded(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "message": message}


MISSING = coded("missing_data", "Required input data is missing.")


def put(http: httpx.Client, **fields: str | bytes) -> httpx.Response:
    """A multipart request as curl --form or requests' files= sends it."""
    parts = {
        k: (None, v) if isinstance(v, str) else (f"{k}.png", v, "image/png")
        for k, v in fields.items()
    }
    return http.put(PUT_URL, files=parts)


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_a_submission_image_is_a_png_that_depends_only_on_the_seed(
    http: httpx.Client, service: Service
) -> None:
    sid = some_submission(service)["submission_id"]
    r = http.get(GET_URL, params={"submissionId": sid, "type": "idImage"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", r.content[16:24])
    assert (width, height) == (320, 200)
    idat = r.content.index(b"IDAT")
    size = struct.unpack(">I", r.content[idat - 4 : idat])[0]
    assert len(zlib.decompress(r.content[idat + 4 : idat + 4 + size])) == 200 * (320 * 3 + 1)
    again = Service(ServiceConfig(seed_count=30, random_seed=7))
    assert again.records.image(again.project("default"), sid, "idImage") == r.content
    selfie = http.get(GET_URL, params={"submission_id": sid, "type": "selfieImage"})
    assert selfie.status_code == 200 and selfie.content != r.content


def test_get_errors(http: httpx.Client, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    missing = coded("missing_data", "Required input data is missing.")
    assert_refused(http.get(GET_URL, params={"type": "idImage"}), 400, missing)
    assert_refused(http.get(GET_URL, params={"submissionId": sid}), 400, missing)
    bad = coded("invalid_type", "Invalid image type: passport")
    assert_refused(http.get(GET_URL, params={"submissionId": sid, "type": "passport"}), 400, bad)
    unknown = coded("invalid_submission", "Invalid submission.")
    assert_refused(
        http.get(GET_URL, params={"submissionId": "nope", "type": "idImage"}), 400, unknown
    )
    none = coded("image_not_found", "Image not found.")
    query = {"submissionId": sid, "type": "addressImage"}  # the factory sends none
    assert_refused(http.get(GET_URL, params=query), 404, none)
    project = coded("invalid_project", "Cannot find project info.")
    wrong = {"x-api-key": "wrong"}
    assert_refused(http.get(GET_URL, params=query, headers=wrong), 400, project)


def test_put_base64_fields_then_get_them(http: httpx.Client, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    r = put(http, submissionId=sid, admin=ADMIN, idType="passport", idImage=b64(PNG),
            addressImage="data:image/png;base64," + b64(PNG))  # fmt: skip
    assert r.status_code == 200 and r.json() == {"message": "complete to update image."}
    got = http.get(GET_URL, params={"submissionId": sid, "type": "addressImage"})
    assert got.content == PNG
    stored = service.stored_submission("default", sid)
    assert stored["image"]["addressImage"].endswith(f"/{sid}/addressImage.png")
    assert stored["data"]["idType"] == "passport"


def test_put_a_file_part_and_a_jpeg(http: httpx.Client, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    assert put(http, submissionId=sid, admin=ADMIN, selfieImage=JPEG).status_code == 200
    with httpx.Client(base_url=str(http.base_url), headers={"x-api-key": API_KEY}) as plain:
        got = plain.get(GET_URL, params={"submissionId": sid, "type": "selfieImage"})
    assert got.headers["content-type"] == "image/jpeg" and got.content == JPEG


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"admin": ADMIN, "selfieImage": b64(PNG)}, MISSING),
        ({"submissionId": "S", "selfieImage": b64(PNG)}, MISSING),
        ({"submissionId": "S", "admin": ADMIN},
         coded("invalid_data", "At least one image parameter is required.")),
        ({"submissionId": "S", "admin": ADMIN, "idImage": b64(PNG)},
         coded("missing_data", "The idType is required when submit idImage or idBackImage.")),
        ({"submissionId": "S", "admin": ADMIN, "idType": "library_card", "idBackImage": b64(PNG)},
         coded("invalid_idType", "Invalid IdType.")),
        ({"submissionId": "S", "admin": ADMIN, "selfieImage": "not base64!"},
         coded("invalid_payload", "Fail to parse the input data.")),
        ({"submissionId": "S", "admin": ADMIN, "selfieImage": b64(b"GIF89a...")},
         coded("invalid_payload", "Fail to parse the input data.")),
        ({"submissionId": "S", "admin": ADMIN, "selfie": b64(PNG)},
         coded("invalid_payload", "Fail to parse the input data.")),
        ({"submissionId": "S", "admin": "nobody@example.com", "selfieImage": b64(PNG)},
         coded("invalid_admin", "Invalid admin.")),
        ({"submissionId": "no-such-id", "admin": ADMIN, "selfieImage": b64(PNG)},
         coded("invalid_submission", "Invalid submission.")),
    ],
)  # fmt: skip
def test_put_errors(
    http: httpx.Client, service: Service, fields: dict[str, str], error: dict[str, str]
) -> None:
    sid = some_submission(service)["submission_id"]
    sent = {k: (sid if v == "S" else v) for k, v in fields.items()}
    assert_refused(lambda: put(http, **sent), 400, error, service=service)


def test_put_key_and_body_errors(http: httpx.Client, service: Service) -> None:
    wrong = {"x-api-key": "wrong"}
    project = coded("invalid_project", "Cannot find project info.")
    assert_refused(http.put(PUT_URL, files={"admin": (None, ADMIN)}, headers=wrong), 400, project)
    parse = coded("invalid_payload", "Fail to parse the input data.")
    no_boundary = {"content-type": "multipart/form-data"}
    r = assert_refused(http.put(PUT_URL, content=b"--x\r\n", headers=no_boundary), 400, parse)
    assert "boundary" in r.headers["x-idv-mock-hint"]
    assert_refused(http.put(PUT_URL, content=b"not json"), 400, parse)


def test_partial_delete_and_delete_remove_the_images(http: httpx.Client, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    put(http, submissionId=sid, admin=ADMIN, idType="passport", idImage=b64(PNG))
    r = http.delete("/v3/submission/partial", params={"submission_id": sid, "fields": "id_image"})
    assert r.status_code == 200
    none = coded("image_not_found", "Image not found.")
    for slot in ("idImage", "idBackImage"):
        assert_refused(http.get(GET_URL, params={"submissionId": sid, "type": slot}), 404, none)
    assert sid not in service.project("default").images  # the put image is gone too
    assert http.get(GET_URL, params={"submissionId": sid, "type": "selfieImage"}).status_code == 200
    assert http.delete("/v3/submission", params={"submission_id": sid}).status_code == 200
    gone = coded("invalid_submission", "Invalid submission.")
    assert_refused(
        http.get(GET_URL, params={"submissionId": sid, "type": "selfieImage"}), 400, gone
    )


def test_put_images_survive_export_and_import(service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    project = service.project("default")
    service.records.put_images(project, sid, ADMIN, {"selfieImage": JPEG}, "")
    state = service.export_state()
    service.reset()
    assert service.records.image(service.project("default"), sid, "selfieImage") != JPEG
    service.import_state(state)
    assert service.records.image(service.project("default"), sid, "selfieImage") == JPEG
