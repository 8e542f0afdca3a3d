# plant 4, for tests/test_regress.c: the periodic nudge never applied
/^VLA_FN void FN(nudge)(CXP, ST \*s)$/{
n
a\
    return;
}
