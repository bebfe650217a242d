"""Golden tests per slot group, Chinese and English, each with cases where the slot must not fire."""

import pytest

Q = 0.0  # "does not fire"


@pytest.mark.parametrize(
    "sentence,word,slot,value",
    [
        # logic relations
        ("因为下雨，所以我们没有去公园。", "因为", "lang.logic.cause", 1.0),
        ("因为下雨，所以我们没有去公园。", "所以", "lang.logic.cause", 1.0),
        ("We stayed because it rained.", "because", "lang.logic.cause", 1.0),
        ("It rained, so we stayed.", "so", "lang.logic.cause", 1.0),
        ("It was so good.", "so", "lang.logic.cause", Q),  # degree, not cause
        ("It was so good.", "so", "lang.mod.degree", 0.75),
        ("他很聪明，但是很懒。", "但是", "lang.logic.adversative", 1.0),
        ("虽然累，我们还是去了。", "虽然", "lang.logic.concessive", 1.0),
        ("As a result, prices fell.", "result", "lang.logic.cause", 1.0),  # multi-word connective
        ("The result was clear.", "result", "lang.logic.cause", Q),
        ("我们去公园。", "公园", "lang.logic.cause", Q),
        # negation
        ("我不去。", "不", "lang.neg.negator", 1.0),
        ("我没有去公园。", "去", "lang.neg.negated", 0.9),
        ("I do not like it.", "not", "lang.neg.negator", 1.0),
        ("I never lie.", "never", "lang.neg.negator", 1.0),
        ("I didn't go, we stayed.", "stayed", "lang.neg.negated", Q),  # scope ends at the clause
        ("我去公园。", "去", "lang.neg.negated", Q),
        ("别走！", "别", "lang.neg.prohibitive", 1.0),
        ("I don't know.", "don't", "lang.neg.prohibitive", Q),
        ("我不是不想去。", "想", "lang.neg.double", 0.8),
        # question
        ("你去吗？", "吗", "lang.question.particle", 1.0),
        ("你去吗？", "你", "lang.question.yes_no", 1.0),
        ("谁去？", "谁", "lang.question.who", 0.9),
        ("What is this?", "What", "lang.question.what", 0.9),
        ("I know what you did.", "what", "lang.question.what", 0.35),
        ("I know what you did.", "know", "lang.mood.question", Q),
        ("你要茶还是咖啡？", "茶", "lang.question.alternative", 1.0),
        ("我们去公园。", "我们", "lang.question.yes_no", Q),
        # mood
        ("我们去公园。", "我们", "lang.mood.statement", 0.9),
        ("太好了！", "好", "lang.mood.exclamation", 1.0),
        ("请坐。", "坐", "lang.mood.imperative", 0.8),
        ("Go home.", "home", "lang.mood.imperative", 0.8),
        ("Where is it?", "is", "lang.mood.question", 1.0),
        ("你好吗？", "你", "lang.mood.statement", Q),
        # tense and aspect
        ("我吃了饭。", "了", "lang.tense.past", 1.0),
        ("我去过北京。", "过", "lang.tense.past", 1.0),
        ("We walked home.", "walked", "lang.tense.past", 0.8),
        ("We went home.", "went", "lang.tense.past", 0.9),
        ("明天我们去公园。", "明天", "lang.tense.future", 0.9),
        ("We will go.", "will", "lang.tense.future", 0.9),
        ("我们去公园。", "去", "lang.tense.past", Q),
        ("We walk home.", "walk", "lang.tense.past", Q),
        ("他正在看书。", "正在", "lang.aspect.progressive", 1.0),
        ("She is running.", "running", "lang.aspect.progressive", 0.9),
        ("We have finished.", "finished", "lang.aspect.perfective", 0.9),
        # person
        ("我去。", "我", "lang.person.first", 1.0),
        ("I go.", "I", "lang.person.first", 1.0),
        ("你去。", "你", "lang.person.second", 1.0),
        ("They go.", "They", "lang.person.third", 1.0),
        ("他去。", "他", "lang.person.first", Q),
        # word class
        ("我们去公园。", "公园", "lang.pos.noun", 0.9),
        ("我们去公园。", "去", "lang.pos.verb", 0.9),
        ("He runs quickly.", "quickly", "lang.pos.adv", 0.7),
        ("我们去公园。", "公园", "lang.pos.verb", Q),
        # semantics
        ("我们去北京。", "北京", "lang.sem.place", 0.9),
        ("昨天下雨。", "昨天", "lang.sem.time", 1.0),
        ("老师来了。", "老师", "lang.sem.person", 0.6),
        ("为了健康，我跑步。", "为了", "lang.sem.purpose", 1.0),
        ("If it rains, we stay.", "If", "lang.sem.condition", 1.0),
        # syntax
        ("我们去公园。", "我们", "lang.syn.subject", 0.7),
        ("我们去公园。", "去", "lang.syn.predicate", 0.8),
        ("我们去公园。", "公园", "lang.syn.object", 0.7),
        ("美丽的花开了。", "美丽", "lang.syn.attributive", 0.7),
        ("他跑得很快。", "很", "lang.syn.complement", 0.6),
        ("妈妈让他走。", "他", "lang.syn.pivot", 0.7),
        ("我们去公园。", "公园", "lang.syn.subject", Q),
        # polarity (flips under negation)
        ("这很好。", "好", "lang.polarity.positive", 1.0),
        ("我不喜欢。", "喜欢", "lang.polarity.negative", 0.8),
        ("This is terrible.", "terrible", "lang.polarity.score", -1.0),
        ("This is not good.", "good", "lang.polarity.score", -0.8),
        ("这是桌子。", "桌子", "lang.polarity.score", Q),
        # modifiers, modality, voice
        ("他比我高。", "比", "lang.mod.comparative", 1.0),
        ("It is bigger than that.", "bigger", "lang.mod.comparative", 0.8),
        ("我们都去。", "都", "lang.mod.scope", 1.0),
        ("美丽的花。", "的", "lang.mod.attributive", 1.0),
        ("非常好。", "非常", "lang.mod.degree", 0.75),
        ("我能去。", "能", "lang.modal.ability", 1.0),
        ("You must go.", "must", "lang.modal.necessity", 1.0),
        ("书被拿走了。", "被", "lang.voice.passive", 1.0),
        ("The book was taken by him.", "was", "lang.voice.passive", Q),  # irregular participle: not listed
        ("The door was opened.", "opened", "lang.voice.passive", 0.8),
        ("我把书放下。", "把", "lang.voice.disposal", 1.0),
        # number
        ("三百个人。", "三百", "lang.num.numeral", 1.0),
        ("三百个人。", "个", "lang.num.measure", 0.8),
        ("第一名。", "第一", "lang.num.ordinal", 1.0),
        ("It costs 42 dollars.", "42", "lang.num.numeral", 1.0),
        ("所有人都来了。", "所有", "lang.num.quantifier", 0.8),
        ("我们去公园。", "公园", "lang.num.numeral", Q),
        # punctuation
        ("好，走。", "，", "lang.punct.comma", 1.0),
        ("好，走。", "。", "lang.punct.boundary", 1.0),
        ("好，走。", "，", "lang.punct.boundary", Q),
        ("Pi is 3.14 here.", "3", "lang.punct.boundary", Q),
        # script and position
        ("因为a1 ", "因", "lang.script.han", 1.0),
        ("因为a1 ", "a", "lang.script.latin", 1.0),
        ("因为a1 ", "1", "lang.script.digit", 1.0),
        ("因为a1 ", " ", "lang.script.whitespace", 1.0),
        ("因为a1 ", "因", "lang.position.word_begin", 1.0),
        ("因为a1 ", "为", "lang.position.word_end", 1.0),
        ("因为a1 ", "因", "lang.script.latin", Q),
        # domain, register, code, names
        ("医生给病人看病。", "医生", "lang.domain.medical", 0.9),
        ("医生给病人看病。", "给", "lang.domain.medical", 0.3),
        ("Install the software.", "software", "lang.domain.tech", 0.9),
        ("我们去公园。", "公园", "lang.domain.medical", Q),
        ("你咋不来？", "咋", "lang.register.colloquial", 0.8),
        ("Call tokenize_file now.", "tokenize_file", "lang.code.identifier", 0.8),
        ("We met Alice in Paris.", "Alice", "lang.entity.proper", 0.8),
        ("We met her in the park.", "park", "lang.entity.proper", Q),
    ],
)
def test_golden(attrs_of, sentence, word, slot, value):
    got = attrs_of(sentence, word).get(slot, 0.0)
    assert got == pytest.approx(value, abs=1e-6), attrs_of(sentence, word)


def test_attributes_depend_on_context_not_the_isolated_character(text):
    """了 in 了解 (to understand) is not a past marker; 了 after a verb is."""
    from v22sdk_text.slots import SCHEMA

    past = SCHEMA.index("lang.tense.past")
    assert text.tokenize("我了解。").attr[1, past] < 0.9
    assert text.tokenize("我走了。").attr[2, past] == 1.0


def test_every_character_of_a_word_shares_its_word_attributes(text):
    from v22sdk_text.slots import SCHEMA

    b = text.tokenize("因为下雨")
    cause = SCHEMA.index("lang.logic.cause")
    assert b.attr[0, cause] == b.attr[1, cause] == 1.0 and b.attr[2, cause] == 0.0


def test_explain_shows_the_rules_that_fired(text):
    from v22sdk_text.slots import SCHEMA

    b = text.tokenize("因为下雨，所以我们没有去公园。")
    names = [dict(row) for row in SCHEMA.explain(b, top=None)]
    assert names[0]["lang.logic.cause"] == 1.0 and names[9]["lang.neg.negator"] == 1.0
    assert names[11]["lang.neg.negated"] == pytest.approx(0.9)


def test_every_slot_fires_somewhere(text):
    """Each of the 128 slots is reachable by some rule on this small bilingual text."""
    from v22sdk_text.slots import SCHEMA

    corpus = (
        "因为下雨，所以我们没有去公园。他比我高、更聪明；但是很懒：总之，比如为了健康，如果虽然而且或者然后"
        "我正在看书。你去过北京吗？谁去？什么时候去哪里为什么怎么多少哪个？你要茶还是咖啡？太好了！请坐。"
        "我能可以应该必须想去。书被拿走了。我把书放下。三百个人。第一名，所有人都来了。“好”… 医生给病人看病。"
        "法院判决合同。银行股票。学校学生。你咋不来？之乎者也。哎，首都北京很美丽的花开得慢慢地跑。妈妈让他走。"
        "我们跑得很快。别走！吾日三省吾身。桌子上面有书。我不是不想去。这不好。明天现在\n"
        "Install the software. Call tokenize_file now. We met Alice in Paris. Go home! 42 km. When do we go? I met my friend John. It's so good. "
        "She is running, the door was opened and we have finished, in short.\n\n 😀 ك"
    )
    b = text.tokenize(corpus)
    active = SCHEMA.active_names(b)
    missing = sorted(set(SCHEMA.names) - active)
    assert not missing, missing
