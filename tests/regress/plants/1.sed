# plant 1, for tests/test_regress.c: dot's running sum kept in the storage format (16 bits in
# f16-f32), a STORE after each of its additions
/^        ADD(R(r), R(r), t);$/a\
        STORE(R(r));
