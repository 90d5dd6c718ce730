"""A person's name in Latin letters (``full_name_en``), as a passport's MRZ line would carry it.

The same person's name, never another one: AML screening takes ``full_name_en`` as an alias.

- Latin script (accents included: ``Nguyễn Văn An``, ``Jürgen``): the name itself.
- Hangul: Revised Romanisation, syllable by syllable, with the usual spelling of common
  family names (``손 예준`` -> ``Son Yejun``, ``김 민준`` -> ``Kim Minjun``).
- Japanese: the readings Faker's ``ja_JP`` names come with (``木村 京助`` -> ``Kimura
  Kyosuke``), and kana by Hepburn (``きむら`` -> ``Kimura``).
- Chinese characters outside those readings: a small table of common family-name and
  given-name characters (pinyin without tones).
- Cyrillic, Greek and Arabic letters: letter by letter.

Characters none of these know are left out; a name with nothing left is kept as it is.
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["romanize"]


def _table(chars: str, romans: str) -> dict[str, str]:
    return dict(zip(chars, romans.split(), strict=True))


# --- Hangul (U+AC00..U+D7A3: (initial * 21 + medial) * 28 + final) ---
_INITIALS = (
    "g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p",
    "h",
)  # fmt: skip
_MEDIALS = (
    "a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u", "wo", "we",
    "wi", "yu", "eu", "ui", "i",
)  # fmt: skip
_FINALS = (
    "", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m", "p", "p",
    "t", "t", "ng", "t", "t", "k", "t", "p", "t",
)  # fmt: skip
# family names as Koreans spell them in passports, rather than by the letter of RR
_KOREAN_FAMILY = {
    "김": "Kim", "이": "Lee", "박": "Park", "최": "Choi", "정": "Jung", "강": "Kang",
    "조": "Cho", "윤": "Yoon", "장": "Jang", "임": "Lim", "한": "Han", "오": "Oh",
    "서": "Seo", "신": "Shin", "권": "Kwon", "황": "Hwang", "안": "Ahn", "송": "Song",
    "류": "Ryu", "유": "Yoo", "전": "Jeon", "홍": "Hong", "고": "Ko", "문": "Moon",
    "양": "Yang", "손": "Son", "배": "Bae", "백": "Baek", "허": "Heo", "남": "Nam",
    "심": "Shim", "노": "Noh", "하": "Ha", "곽": "Kwak", "성": "Sung", "차": "Cha",
    "주": "Joo", "우": "Woo", "구": "Koo", "민": "Min", "진": "Jin", "지": "Ji",
    "엄": "Eom", "채": "Chae", "원": "Won", "천": "Cheon", "방": "Bang", "공": "Kong",
    "현": "Hyun", "변": "Byun", "여": "Yeo", "추": "Choo", "도": "Do", "석": "Seok",
    "명": "Myung", "기": "Ki", "왕": "Wang", "금": "Keum", "육": "Yook", "인": "In",
    "남궁": "Namgung", "제갈": "Jegal", "황보": "Hwangbo", "선우": "Sunwoo",
}  # fmt: skip

# --- kana (Hepburn); katakana are read as the hiragana 0x60 below them ---
_KANA = _table(
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
    "がぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽぁぃぅぇぉゔ",
    "a i u e o ka ki ku ke ko sa shi su se so ta chi tsu te to na ni nu ne no "
    "ha hi fu he ho ma mi mu me mo ya yu yo ra ri ru re ro wa o n "
    "ga gi gu ge go za ji zu ze zo da ji zu de do ba bi bu be bo pa pi pu pe po "
    "a i u e o vu",
)
_SMALL_Y = {"ゃ": "a", "ゅ": "u", "ょ": "o"}

# --- Chinese: common characters of names (pinyin, no tones) ---
_HANZI = {
    "王": "wang", "李": "li", "张": "zhang", "張": "zhang", "刘": "liu", "劉": "liu",
    "陈": "chen", "陳": "chen", "杨": "yang", "楊": "yang", "黄": "huang", "黃": "huang",
    "赵": "zhao", "趙": "zhao", "吴": "wu", "吳": "wu", "周": "zhou", "徐": "xu",
    "孙": "sun", "孫": "sun", "马": "ma", "馬": "ma", "朱": "zhu", "胡": "hu", "郭": "guo",
    "何": "he", "高": "gao", "林": "lin", "罗": "luo", "羅": "luo", "郑": "zheng",
    "鄭": "zheng", "梁": "liang", "谢": "xie", "謝": "xie", "宋": "song", "唐": "tang",
    "许": "xu", "許": "xu", "韩": "han", "韓": "han", "冯": "feng", "邓": "deng", "曹": "cao",
    "彭": "peng", "曾": "zeng", "肖": "xiao", "田": "tian", "董": "dong", "潘": "pan",
    "袁": "yuan", "蔡": "cai", "蒋": "jiang", "余": "yu", "于": "yu", "杜": "du", "叶": "ye",
    "葉": "ye", "程": "cheng", "魏": "wei", "苏": "su", "吕": "lv", "丁": "ding", "沈": "shen",
    "伟": "wei", "偉": "wei", "芳": "fang", "娜": "na", "敏": "min", "静": "jing",
    "靜": "jing", "丽": "li", "麗": "li", "强": "qiang", "強": "qiang", "磊": "lei",
    "军": "jun", "軍": "jun", "洋": "yang", "勇": "yong", "艳": "yan", "杰": "jie",
    "傑": "jie", "娟": "juan", "涛": "tao", "濤": "tao", "明": "ming", "超": "chao",
    "秀": "xiu", "英": "ying", "华": "hua", "華": "hua", "平": "ping", "刚": "gang",
    "桂": "gui", "文": "wen", "辉": "hui", "輝": "hui", "鑫": "xin", "宇": "yu", "浩": "hao",
    "欣": "xin", "婷": "ting", "雪": "xue", "慧": "hui", "建": "jian", "国": "guo",
    "國": "guo", "红": "hong", "紅": "hong", "小": "xiao", "玉": "yu", "兰": "lan",
    "蘭": "lan", "海": "hai", "云": "yun", "雲": "yun", "佳": "jia", "子": "zi", "一": "yi",
    "志": "zhi", "新": "xin", "晨": "chen", "阳": "yang", "陽": "yang", "俊": "jun",
    "东": "dong", "東": "dong", "春": "chun", "梅": "mei", "龙": "long", "龍": "long",
}  # fmt: skip

# --- Cyrillic, Greek, Arabic: letter by letter ---
_LETTERS = {
    **_table(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґ",
        "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch - y - e yu ya i yi ye g",
    ),
    **_table(
        "αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώϊϋΐΰ",
        "a v g d e z i th i k l m n x o p r s s t y f ch ps o a e i i o y o i y i y",
    ),
    **_table(
        "ابتثجحخدذرزسشصضطظعغفقكلمنهويءآأإةى",
        "a b t th j h kh d dh r z s sh s d t z - gh f q k l m n h w y - a a i a a",
    ),
}


def romanize(name: str, *, family_first: bool = False) -> str:
    """``name`` in Latin letters (see the module docstring); ``family_first``: the family
    name is the first word (Korean, Japanese, Vietnamese order), else the last."""
    if name.isascii():
        return name
    words = name.split()
    if all(map(_latin, words)):  # what splits words is no letter: as the whole name
        return name
    family = 0 if family_first else len(words) - 1
    out = [_word(word, family=i == family) for i, word in enumerate(words)]
    latin = " ".join(w for w in out if w)
    return latin or name


# Both are asked of the same words again and again (seeded names come from pools of a
# couple of hundred per locale): kept, so a name costs two look-ups after its first time.
@functools.lru_cache(maxsize=8192)
def _latin(text: str) -> bool:
    if text.isascii():  # every ASCII letter is LATIN: no name look-up per character
        return True
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in text)


@functools.lru_cache(maxsize=8192)
def _word(word: str, *, family: bool) -> str:
    if family and word in _KOREAN_FAMILY:
        return _KOREAN_FAMILY[word]
    japanese = _japanese_readings().get(word)
    if japanese is not None:
        return japanese
    return _letters(word).capitalize()


def _letters(word: str) -> str:
    out: list[str] = []
    double = False  # a small tsu doubles the next consonant
    greek_ou = word.lower().replace("\u03bf\u03c5", "ou").replace("\u03bf\u03cd", "ou")
    for char in greek_ou:  # Greek omicron-upsilon is one sound, "ou"
        code = ord(char)
        if 0xAC00 <= code <= 0xD7A3:
            initial, rest = divmod(code - 0xAC00, 21 * 28)
            medial, final = divmod(rest, 28)
            out.append(_INITIALS[initial] + _MEDIALS[medial] + _FINALS[final])
            continue
        if 0x30A1 <= code <= 0x30F6:  # katakana -> hiragana
            char = chr(code - 0x60)
        if char in ("っ", "ッ"):
            double = True
            continue
        if char in _SMALL_Y and out and out[-1].endswith("i"):
            stem = out.pop()[:-1]
            out.append((stem if stem.endswith(("sh", "ch", "j")) else stem + "y") + _SMALL_Y[char])
            continue
        if char == "ー":  # a long vowel: Hepburn without macrons writes it once
            continue
        piece = _KANA.get(char) or _HANZI.get(char) or _LETTERS.get(char, "")
        if char.isascii() and char.isalpha():
            piece = char.lower()
        piece = piece.strip("-")
        if double and piece:
            piece = piece[0] + piece
        double = False
        out.append(piece)
    return "".join(out)


@functools.cache
def _japanese_readings() -> dict[str, str]:
    """Faker's ``ja_JP`` names with their romanised readings: (kanji, kana, romaji)."""
    from faker.providers.person.ja_JP import Provider

    readings: dict[str, str] = {}
    for table in ("last_name_pairs", "first_name_male_pairs", "first_name_female_pairs"):
        for kanji, _kana, romaji in getattr(Provider, table, ()):
            readings.setdefault(kanji, romaji)
    return readings
