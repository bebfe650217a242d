"""The 128 named slots of the language zone (attr 0..127) and the rule behind each.

Layout follows upstream's P3 stack where it was defined (word class 0-9, semantics 10-23, syntax
24-33, emotion 34-36, tense 37-39, person 40-41, logic 42-52, modifiers 56-63: downstream stages
read those offsets) and fills the groups upstream left empty. Every value is a rule confidence
in [0, 1] unless the scaling says otherwise; ``SLOT_RULES`` holds the rule and an example per slot
for the docs (``python -m v22sdk_text.docs``).
"""

from __future__ import annotations

from v22sdk import AttributeSchema

C = "confidence in [0, 1]"
W = "confidence in [0, 1]; word rule, broadcast to every character of the word"
S = "confidence in [0, 1]; sentence rule, broadcast to every character of the sentence"

# (name, meaning, scaling, rule, example)
SPECS: list[tuple[str, str, str, str, str]] = [
    # -- 0..9 word class (upstream basic_type) -------------------------------------------------
    (
        "lang.pos.noun",
        "word is a noun",
        W,
        "jieba tag n*/s/t/f/vn/an; English suffix -tion/-ness/-ment..., or unknown word (0.4)",
        "公园, weather",
    ),
    ("lang.pos.verb", "word is a verb", W, "jieba tag v*; English lexicon verb, -ize/-ify, -ed/-ing forms", "去, went"),
    (
        "lang.pos.adj",
        "word is an adjective",
        W,
        "jieba tag a/b/z/ag; English lexicon adjective or suffix -ous/-ful/-able/-ive...",
        "美丽, happy",
    ),
    ("lang.pos.adv", "word is an adverb", W, "jieba tag d/ad; English -ly or lexicon adverb", "非常, quickly"),
    ("lang.pos.pronoun", "word is a pronoun", W, "jieba tag r*; English pronoun list", "我们, they"),
    (
        "lang.pos.quantifier",
        "word is a numeral or classifier",
        W,
        "jieba tag m/q/mq; digits; English number words",
        "三, 个, 42",
    ),
    ("lang.pos.preposition", "word is a preposition", W, "jieba tag p; English preposition list", "在, with"),
    ("lang.pos.conjunction", "word is a conjunction", W, "jieba tag c; English conjunction list", "因为, because"),
    (
        "lang.pos.auxiliary",
        "word is a particle or auxiliary",
        W,
        "jieba tag u*/y; English auxiliaries, modals, determiners",
        "了, 的, will",
    ),
    ("lang.pos.interjection", "word is an interjection", W, "jieba tag e/o; English interjection list", "哎, wow"),
    # -- 10..23 semantic category ------------------------------------------------------------------
    (
        "lang.sem.person",
        "word denotes a person",
        W,
        "jieba nr*; Chinese suffix 人/者/员/师/家...; English -er/-ist/-ian, person pronouns",
        "老师, teacher",
    ),
    (
        "lang.sem.place",
        "word denotes a place",
        W,
        "jieba ns/s; Chinese suffix 国/市/园/馆/路...; English place list",
        "公园, park",
    ),
    ("lang.sem.time", "word denotes a time", W, "jieba t; suffix 年/月/日/天; English time list", "昨天, tomorrow"),
    ("lang.sem.object", "word denotes a thing", W, "common noun not matched by a narrower category (0.5)", "书, book"),
    ("lang.sem.action", "word denotes an action", W, "verb (0.7)", "去, run"),
    ("lang.sem.state", "word denotes a state or quality", W, "adjective or state word (0.7)", "高兴, happy"),
    ("lang.sem.quantity", "word denotes an amount", W, "numeral, classifier, quantifier", "三, many"),
    ("lang.sem.degree", "word denotes a degree", W, "degree adverb lexicon", "非常, very"),
    ("lang.sem.position", "word denotes a relative position", W, "jieba f; English spatial list", "上面, above"),
    ("lang.sem.manner", "word denotes a manner", W, "manner adverb (-ly, X地, jieba ad)", "慢慢, slowly"),
    ("lang.sem.cause", "word introduces a cause", W, "lexicon (cause connectives, 原因)", "因为, because"),
    ("lang.sem.result", "word introduces a result", W, "lexicon (result connectives, 结果)", "所以, therefore"),
    ("lang.sem.purpose", "word introduces a purpose", W, "lexicon (为了, in order to)", "为了, purpose"),
    ("lang.sem.condition", "word introduces a condition", W, "lexicon (如果, if, unless)", "如果, if"),
    # -- 24..33 syntactic role (heuristic, clause-level) -----------------------------------------------
    (
        "lang.syn.subject",
        "word is (part of) the subject",
        "confidence in [0, 1]; clause rule",
        "noun/pronoun before the clause's first verb (0.7)",
        "我们 in 我们去公园",
    ),
    (
        "lang.syn.predicate",
        "word is the main predicate",
        "confidence in [0, 1]; clause rule",
        "first verb of the clause (0.8); adjective after a be-verb counts as complement",
        "去 in 我们去公园",
    ),
    (
        "lang.syn.object",
        "word is (part of) the object",
        "confidence in [0, 1]; clause rule",
        "noun/pronoun after the clause's first verb (0.7)",
        "公园 in 我们去公园",
    ),
    (
        "lang.syn.attributive",
        "word modifies a noun",
        "confidence in [0, 1]; clause rule",
        "adjective before a noun, or word followed by 的 (0.7)",
        "美丽 in 美丽的花",
    ),
    (
        "lang.syn.adverbial",
        "word modifies a verb or clause",
        "confidence in [0, 1]; clause rule",
        "adverb, preposition, time word before the verb, word before 地 (0.7)",
        "很, 昨天",
    ),
    (
        "lang.syn.complement",
        "word completes the predicate",
        "confidence in [0, 1]; clause rule",
        "word after 得, adjective after a be-verb (0.6)",
        "好 in 跑得好, happy in is happy",
    ),
    (
        "lang.syn.pivot",
        "object of a causative that is the subject of the next verb",
        "confidence in [0, 1]; clause rule",
        "noun/pronoun right after 让/叫/使/let/make (0.7)",
        "他 in 让他走",
    ),
    (
        "lang.syn.serial_verb",
        "a later verb in a serial-verb chain",
        "confidence in [0, 1]; clause rule",
        "verb after the predicate in the same clause (0.6)",
        "玩 in 去公园玩",
    ),
    (
        "lang.syn.appositive",
        "word renames the noun before it",
        "confidence in [0, 1]; clause rule",
        "proper noun right after a common noun or pronoun (0.5)",
        "北京 in 首都北京",
    ),
    (
        "lang.syn.independent",
        "word stands outside the clause",
        "confidence in [0, 1]; clause rule",
        "interjection or discourse marker (0.7)",
        "哎, well",
    ),
    # -- 34..36 polarity ------------------------------------------------------------------------------
    (
        "lang.polarity.score",
        "signed sentiment of the word in context",
        "-1 (negative) .. +1 (positive); sign flipped (x0.8) inside negation scope",
        "sentiment lexicon, flipped when negated",
        "好 +1, 不好: 好 -0.8",
    ),
    ("lang.polarity.positive", "word carries positive sentiment in context", W, "|score| when score > 0", "喜欢, love"),
    (
        "lang.polarity.negative",
        "word carries negative sentiment in context",
        W,
        "|score| when score < 0",
        "讨厌, terrible",
    ),
    # -- 37..39 tense ---------------------------------------------------------------------------------
    (
        "lang.tense.past",
        "past time reference",
        "marker word 0.9-1.0; other words of its clause 0.5 x marker",
        "了/过/已经/昨天, -ed, irregular past, yesterday/ago",
        "了, went",
    ),
    (
        "lang.tense.present",
        "present time reference",
        "marker word 0.7-0.9; other words of its clause 0.5 x marker",
        "正在/现在/now/am/is/are",
        "现在, now",
    ),
    (
        "lang.tense.future",
        "future time reference",
        "marker word 0.9; other words of its clause 0.5 x marker",
        "将/将要/明天/will/shall/'ll, 将+verb, 会+verb (0.6)",
        "明天, will",
    ),
    # -- 40..41 person (upstream kept two slots; third person is at 53) --------------------------------
    ("lang.person.first", "first-person reference", W, "person lexicon", "我, we"),
    ("lang.person.second", "second-person reference", W, "person lexicon", "你, you"),
    # -- 42..52 logic relation of connectives ------------------------------------------------------------
    (
        "lang.logic.cause",
        "causal connective",
        W,
        "connective lexicon (0.9); English 'so' before an adjective is degree instead",
        "因为, 所以, because, so",
    ),
    ("lang.logic.adversative", "contrast connective", W, "connective lexicon", "但是, however"),
    ("lang.logic.coordinate", "coordinating connective", W, "connective lexicon", "和, and"),
    ("lang.logic.conditional", "condition connective", W, "connective lexicon", "如果, unless"),
    ("lang.logic.progressive", "'not only ... but also' connective", W, "connective lexicon", "而且, moreover"),
    ("lang.logic.concessive", "concession connective", W, "connective lexicon", "虽然, although"),
    ("lang.logic.alternative", "choice connective", W, "connective lexicon", "或者, or"),
    ("lang.logic.sequential", "sequence connective", W, "connective lexicon", "然后, then"),
    ("lang.logic.summary", "summarising connective", W, "connective lexicon", "总之, in short"),
    ("lang.logic.example", "exemplifying connective", W, "connective lexicon", "比如, for example"),
    ("lang.logic.purpose", "purpose connective", W, "connective lexicon", "为了, so that"),
    # -- 53..55 ---------------------------------------------------------------------------------------------
    ("lang.person.third", "third-person reference", W, "person lexicon", "他, they"),
    (
        "lang.aspect.perfective",
        "completed action",
        "marker 0.9; the verb before 了/过 or after have 0.7",
        "了/过/完/已经, have/has + -ed",
        "了 in 去了",
    ),
    (
        "lang.aspect.progressive",
        "ongoing action",
        "marker 0.9; 在+verb 0.8; be + -ing 0.9 on both",
        "正在/着, be + -ing",
        "正在, is running",
    ),
    # -- 56..63 modifiers ------------------------------------------------------------------------------
    ("lang.mod.adjective", "adjectival modifier", W, "adjective word class (0.8)", "美丽, red"),
    ("lang.mod.manner", "manner modifier", W, "-ly adverb, jieba ad, reduplicated adverb", "慢慢, slowly"),
    ("lang.mod.scope", "scope adverb", W, "scope lexicon", "都, only"),
    ("lang.mod.attributive", "attributive marker", W, "的/之 (de_type attributive)", "的"),
    ("lang.mod.adverbial", "adverbial marker", W, "地 particle", "地"),
    ("lang.mod.complement", "complement marker", W, "得 particle", "得"),
    (
        "lang.mod.degree",
        "degree of a degree word",
        "low 0.25, medium 0.5, high 0.75, excess 1.0",
        "degree lexicon; English 'so' before an adjective = high",
        "很 0.75, 太 1.0, slightly 0.25",
    ),
    (
        "lang.mod.comparative",
        "comparison",
        W,
        "比/更/比较/more/less/better/worse (1.0); the word before than (0.8)",
        "比, bigger",
    ),
    # -- 64..67 negation ---------------------------------------------------------------------------------
    ("lang.neg.negator", "word is a negator", W, "negator lexicon, English n't contractions", "不, 没, not, never"),
    (
        "lang.neg.negated",
        "word is inside a negation scope",
        "0.9 after a negator, up to the end of its clause",
        "clause rule",
        "去 in 没有去",
    ),
    (
        "lang.neg.double",
        "clause holds two or more negators",
        "0.8 on every word of the clause",
        "clause rule",
        "不是不想",
    ),
    (
        "lang.neg.prohibitive",
        "prohibition (negative command)",
        "1.0 on the marker, 0.8 on its scope",
        "别/不要/不许/禁止/don't at clause start",
        "别, don't",
    ),
    # -- 68..79 question -----------------------------------------------------------------------------------
    ("lang.question.particle", "question particle or question mark", W, "吗/呢/么/?/？", "吗, ?"),
    ("lang.question.who", "asks for a person", "0.9 in a question sentence, 0.35 otherwise", "谁/who/whom/whose", "谁"),
    ("lang.question.what", "asks for a thing", "0.9 in a question sentence, 0.35 otherwise", "什么/啥/what", "什么"),
    (
        "lang.question.where",
        "asks for a place",
        "0.9 in a question sentence, 0.35 otherwise",
        "哪里/哪儿/where",
        "哪里",
    ),
    (
        "lang.question.when",
        "asks for a time",
        "0.9 in a question sentence, 0.35 otherwise",
        "什么时候/几时/when",
        "when",
    ),
    (
        "lang.question.why",
        "asks for a reason",
        "0.9 in a question sentence, 0.35 otherwise",
        "为什么/为何/why",
        "为什么",
    ),
    (
        "lang.question.how",
        "asks for a manner",
        "0.9 in a question sentence, 0.35 otherwise",
        "怎么/怎样/如何/how",
        "怎么",
    ),
    (
        "lang.question.quantity",
        "asks for an amount",
        "0.9 in a question sentence, 0.35 otherwise",
        "多少/几/how many/how much",
        "多少",
    ),
    ("lang.question.which", "asks to choose", "0.9 in a question sentence, 0.35 otherwise", "哪/哪个/which", "哪个"),
    (
        "lang.question.yes_no",
        "sentence is a yes/no question",
        S,
        "question sentence without a wh-word or alternative",
        "你去吗？",
    ),
    ("lang.question.wh", "sentence is a wh-question", S, "question sentence with a wh-word", "谁去？"),
    (
        "lang.question.alternative",
        "sentence is an alternative question",
        S,
        "question sentence with 还是/or",
        "茶还是咖啡？",
    ),
    # -- 80..83 sentence mood ----------------------------------------------------------------------------
    (
        "lang.mood.statement",
        "sentence is a statement",
        S,
        "sentence with content that is not a question, imperative or exclamation (0.9)",
        "我们去公园。",
    ),
    ("lang.mood.question", "sentence is a question", S, "?/？ 1.0; particle 吗/呢 0.9; wh-word only 0.6", "你好吗"),
    (
        "lang.mood.imperative",
        "sentence is a command or request",
        S,
        "first word is 请/别/不要/让我们/please/let/don't or an English base-form verb (0.8)",
        "请坐。Go home.",
    ),
    (
        "lang.mood.exclamation",
        "sentence is an exclamation",
        S,
        "ends in !/！ and is not a question (1.0); 太…了 (0.6)",
        "太好了！",
    ),
    # -- 84..88 modality ---------------------------------------------------------------------------------
    ("lang.modal.ability", "ability", W, "modal lexicon", "能, can"),
    ("lang.modal.permission", "permission", W, "modal lexicon", "可以, may"),
    ("lang.modal.obligation", "obligation", W, "modal lexicon", "应该, should"),
    ("lang.modal.necessity", "necessity", W, "modal lexicon", "必须, must"),
    ("lang.modal.desire", "desire or intention", W, "modal lexicon", "想, want"),
    # -- 89..90 voice ---------------------------------------------------------------------------------------
    (
        "lang.voice.passive",
        "passive voice",
        "marker 0.9; be + participle 0.8 on both",
        "被/受/遭, be + -ed/irregular participle",
        "被, was taken",
    ),
    ("lang.voice.disposal", "disposal (ba) construction", "0.9 on the marker", "把; 将 before a noun/pronoun", "把"),
    # -- 91..95 number ---------------------------------------------------------------------------------------
    (
        "lang.num.numeral",
        "word is a number",
        W,
        "digits, Chinese numerals (jieba m), English number words",
        "42, 三百, seven",
    ),
    (
        "lang.num.magnitude",
        "size of the number",
        "log10(1 + |value|) / 12, clipped to [0, 1]",
        "parsed value of the numeral word",
        "三百 -> 0.207",
    ),
    ("lang.num.measure", "classifier or unit", W, "jieba q; unit lexicon", "个, km"),
    ("lang.num.ordinal", "ordinal number", W, "第X, first/second/..., 1st/2nd/3rd/Nth", "第一, 2nd"),
    ("lang.num.quantifier", "quantifying word", W, "quantifier lexicon", "所有, every"),
    # -- 96..105 punctuation -------------------------------------------------------------------------------
    ("lang.punct.period", "full stop", C, "。 . ．", "。"),
    ("lang.punct.comma", "comma", C, "， ,", "，"),
    ("lang.punct.enumeration", "enumeration comma", C, "、", "、"),
    ("lang.punct.semicolon", "semicolon", C, "； ;", "；"),
    ("lang.punct.colon", "colon", C, "： :", "："),
    ("lang.punct.question", "question mark", C, "？ ?", "？"),
    ("lang.punct.exclamation", "exclamation mark", C, "！ !", "！"),
    ("lang.punct.paired", "quote or bracket", C, "“”‘’\"'()（）《》【】[]{}「」『』", "《"),
    ("lang.punct.other", "other punctuation or symbol", C, "Unicode category P* or S* not listed above", "…, —, @"),
    (
        "lang.punct.boundary",
        "character ends a sentence",
        C,
        "。！？!?… and '.' before whitespace or end; the last one of a run",
        "。",
    ),
    # -- 106..111 position ---------------------------------------------------------------------------------
    ("lang.position.word_begin", "first character of a multi-character word", "1 or 0", "segmentation", "因 in 因为"),
    ("lang.position.word_end", "last character of a multi-character word", "1 or 0", "segmentation", "为 in 因为"),
    ("lang.position.word_single", "the word has one character", "1 or 0", "segmentation", "去"),
    (
        "lang.position.in_word",
        "position inside the word",
        "(k + 1) / word length, in (0, 1]",
        "segmentation",
        "为 in 因为: 1.0",
    ),
    (
        "lang.position.in_sentence",
        "position inside the sentence",
        "(k + 1) / sentence length in characters, in (0, 1]",
        "sentence split",
        "。 ends at 1.0",
    ),
    ("lang.position.word_length", "length of the word", "min(length, 8) / 8", "segmentation", "因为: 0.25"),
    # -- 112..116 script -----------------------------------------------------------------------------------
    (
        "lang.script.han",
        "character is Han (CJK ideograph)",
        "1 or 0",
        "code point in a CJK Unified/Compatibility block or 〇",
        "因",
    ),
    (
        "lang.script.latin",
        "character is a Latin letter",
        "1 or 0",
        "A-Z, a-z, U+00C0..U+024F letters, fullwidth Latin",
        "a, é",
    ),
    ("lang.script.digit", "character is a digit", "1 or 0", "0-9 and fullwidth ０-９", "7"),
    ("lang.script.whitespace", "character is whitespace", "1 or 0", "str.isspace", "space, newline"),
    (
        "lang.script.other",
        "any other character",
        "1 or 0",
        "not Han, Latin, digit or whitespace (punctuation, kana, emoji, ...)",
        "。, 😀, ك",
    ),
    # -- 117..121 domain -----------------------------------------------------------------------------------
    (
        "lang.domain.tech",
        "technology vocabulary",
        "0.9 on a lexicon word; 0.3 on the other words of its sentence",
        "domain lexicon",
        "算法, software",
    ),
    (
        "lang.domain.medical",
        "medical vocabulary",
        "0.9 on a lexicon word; 0.3 on the other words of its sentence",
        "domain lexicon",
        "医生, patient",
    ),
    (
        "lang.domain.legal",
        "legal vocabulary",
        "0.9 on a lexicon word; 0.3 on the other words of its sentence",
        "domain lexicon",
        "法院, contract",
    ),
    (
        "lang.domain.finance",
        "finance vocabulary",
        "0.9 on a lexicon word; 0.3 on the other words of its sentence",
        "domain lexicon",
        "股票, bank",
    ),
    (
        "lang.domain.education",
        "education vocabulary",
        "0.9 on a lexicon word; 0.3 on the other words of its sentence",
        "domain lexicon",
        "学校, student",
    ),
    # -- 122..124 register -----------------------------------------------------------------------------------
    (
        "lang.register.colloquial",
        "colloquial register",
        "0.8 on a lexicon word; 0.3 on the other words of its sentence",
        "register lexicon (啥/咋/嘛/gonna/yeah)",
        "啥, gonna",
    ),
    (
        "lang.register.formal",
        "formal/written register",
        "0.8 on a lexicon word (chengyu 0.5); 0.3 on its sentence",
        "register lexicon; jieba tag i (chengyu)",
        "鉴于, hereby",
    ),
    (
        "lang.register.classical",
        "classical Chinese function word",
        "0.8 on the word; 0.3 on its sentence",
        "之乎者也矣焉哉兮 as single-character words",
        "之, 乎",
    ),
    # -- 125..127 --------------------------------------------------------------------------------------------
    (
        "lang.code.identifier",
        "word looks like a program identifier",
        W,
        "snake_case, camelCase, letters+digits (0.8); code keyword list (0.5)",
        "tokenize_file, def",
    ),
    (
        "lang.sent.length",
        "length of the sentence",
        "log2(1 + chars) / log2(1 + 512), clipped to [0, 1]",
        "sentence split",
        "10 chars -> 0.38",
    ),
    (
        "lang.entity.proper",
        "word is a proper name",
        W,
        "jieba nr/ns/nt/nz; English capitalised word not at sentence start (0.8; 0.3 at start)",
        "北京, London",
    ),
]

SCHEMA = AttributeSchema.build("language", [(n, m, s) for n, m, s, _, _ in SPECS])
SLOT_RULES: dict[str, tuple[str, str]] = {n: (r, e) for n, _, _, r, e in SPECS}
#: Column (0..127) of each slot name inside the language zone.
COL: dict[str, int] = {n: i for i, (n, *_rest) in enumerate(SPECS)}


def markdown_table() -> str:
    """Every slot: position, name, meaning, scaling, rule, example (for docs/text-modality.md)."""
    lines = ["| slot | name | meaning | value | rule | example |", "|---:|---|---|---|---|---|"]
    for slot in SCHEMA:
        rule, example = SLOT_RULES[slot.name]
        lines.append(f"| {slot.index} | `{slot.name}` | {slot.meaning} | {slot.scaling} | {rule} | {example} |")
    return "\n".join(lines).replace('|"|', "|")
