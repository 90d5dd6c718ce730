"""The pages' words in English and Korean (``lang=en``, ``lang=ko``), one table each.

Error messages are not here: they live in ``errors.py`` (the page shows the code with them).
"""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Identity verification",
        "step_consent": "Consent",
        "step_country": "Issuing country",
        "step_id_type": "ID type",
        "step_document": "Your ID document",
        "step_selfie": "Selfie",
        "step_tester": "Tester panel",
        "step_done": "Verification complete",
        "consent_text": "To verify your identity we process a photo of your ID document "
        "and a selfie. This is a mock service: no real data is processed.",
        "agree": "I agree to the processing of my personal data",
        "next": "Next",
        "country": "Country that issued your ID",
        "id_type": "Type of ID",
        "document_hint": "We read these fields from your document. Correct them if needed.",
        "retry_notice": "We could not recognise your ID. Please try again.",
        "sample": "Sample document (generated)",
        "full_name": "Full name",
        "first_name": "First name",
        "last_name": "Last name",
        "date_of_birth": "Date of birth (YYYY-MM-DD)",
        "gender": "Gender",
        "male": "Male",
        "female": "Female",
        "documentNumber": "Document number",
        "identityNumber": "Identity number",
        "idcard_issueDate": "Issue date (YYYY-MM-DD)",
        "idcard_expireDate": "Expiry date (YYYY-MM-DD)",
        "selfie_text": "Look into the camera. (A placeholder: nothing is captured.)",
        "capture": "Take selfie",
        "tester_text": "Not part of the real form: choose what the verification result is.",
        "outcome": "Outcome",
        "approved": "Approved",
        "rejected": "Rejected",
        "pending": "Pending",
        "reason": "Rejection reason",
        "fail_once": "Fail recognition once (the applicant must retry the document)",
        "finish": "Finish",
        "done_text": "Thank you. Your verification has been submitted.",
        "submission_id": "Submission id",
        "kyc_status": "Status",
        "ok": "Ok",
        "redirect_note": "You will be returned in 5 seconds.",
        "closed": "You can close this window now.",
        "error_title": "Something went wrong",
        "error_code": "Error code",
        "debug": "Debug panel (mock only)",
        "debug_unknown": "Unknown parameters (ignored)",
        "debug_ignored": "Known parameters ignored",
        "debug_read": "Parameters read",
        "returned": "Returned to the integrator",
        "invalid_field": "Please check this field.",
        "document": "Your ID document",
    },
    "ko": {
        "title": "신원 인증",
        "step_consent": "동의",
        "step_country": "발급 국가",
        "step_id_type": "신분증 종류",
        "step_document": "신분증",
        "step_selfie": "셀피",
        "step_tester": "테스터 패널",
        "step_done": "인증 완료",
        "consent_text": "신원 확인을 위해 신분증 사진과 셀피를 처리합니다. "
        "이 서비스는 모의 서비스로 실제 데이터를 처리하지 않습니다.",
        "agree": "개인정보 처리에 동의합니다",
        "next": "다음",
        "country": "신분증 발급 국가",
        "id_type": "신분증 종류",
        "document_hint": "신분증에서 읽은 정보입니다. 필요하면 수정하세요.",
        "retry_notice": "신분증을 인식하지 못했습니다. 다시 시도해 주세요.",
        "sample": "샘플 신분증 (생성됨)",
        "full_name": "성명",
        "first_name": "이름",
        "last_name": "성",
        "date_of_birth": "생년월일 (YYYY-MM-DD)",
        "gender": "성별",
        "male": "남성",
        "female": "여성",
        "documentNumber": "문서 번호",
        "identityNumber": "신원 번호",
        "idcard_issueDate": "발급일 (YYYY-MM-DD)",
        "idcard_expireDate": "만료일 (YYYY-MM-DD)",
        "selfie_text": "카메라를 바라보세요. (자리 표시자: 촬영하지 않습니다.)",
        "capture": "셀피 촬영",
        "tester_text": "실제 양식에는 없습니다: 인증 결과를 선택하세요.",
        "outcome": "결과",
        "approved": "승인",
        "rejected": "거절",
        "pending": "보류",
        "reason": "거절 사유",
        "fail_once": "인식 한 번 실패 (신분증 단계를 다시 진행)",
        "finish": "완료",
        "done_text": "감사합니다. 인증이 제출되었습니다.",
        "submission_id": "제출 ID",
        "kyc_status": "상태",
        "ok": "확인",
        "redirect_note": "5초 후 돌아갑니다.",
        "closed": "이제 창을 닫으셔도 됩니다.",
        "error_title": "문제가 발생했습니다",
        "error_code": "오류 코드",
        "debug": "디버그 패널 (모의 서비스 전용)",
        "debug_unknown": "알 수 없는 매개변수 (무시됨)",
        "debug_ignored": "무시된 매개변수",
        "debug_read": "읽은 매개변수",
        "returned": "연동 서비스로 전달된 값",
        "invalid_field": "이 항목을 확인하세요.",
        "document": "신분증",
    },
}

ID_TYPES: dict[str, tuple[str, str]] = {
    "government_id": ("Government ID", "주민등록증"),
    "foreign_registrator": ("Foreign registration card", "외국인등록증"),
    "passport": ("Passport", "여권"),
    "drivers_license": ("Driver's license", "운전면허증"),
    "vehicle_registration_certificate": ("Vehicle registration", "자동차 등록증"),
    "aadhaar": ("Aadhaar", "아드하르"),
    "residence_permit": ("Residence permit", "거주 허가증"),
    "pancard": ("PAN card", "PAN 카드"),
    "visa": ("Visa", "비자"),
    "identification_card": ("Identification card", "신분증"),
}

COUNTRY_NAMES: dict[str, tuple[str, str]] = {
    "KOR": ("Republic of Korea", "대한민국"),
    "USA": ("United States", "미국"),
    "GBR": ("United Kingdom", "영국"),
    "DEU": ("Germany", "독일"),
    "FRA": ("France", "프랑스"),
    "JPN": ("Japan", "일본"),
    "IND": ("India", "인도"),
    "BRA": ("Brazil", "브라질"),
    "VNM": ("Viet Nam", "베트남"),
    "ESP": ("Spain", "스페인"),
    "ITA": ("Italy", "이탈리아"),
}


def labels(lang: str) -> dict[str, str]:
    return LABELS.get(lang, LABELS["en"])


def id_type_name(id_type: str, lang: str) -> str:
    names = ID_TYPES.get(id_type)
    return id_type if names is None else names[1 if lang == "ko" else 0]


def country_name(code: str, lang: str) -> str:
    names = COUNTRY_NAMES.get(code)
    return code if names is None else f"{names[1 if lang == 'ko' else 0]} ({code})"
