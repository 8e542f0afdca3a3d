# plant 2, for tests/test_regress.c: sm-sym's update forgets to mirror the upper triangle (the
# mirror's two lines in sm-sym's branch, from its square root of delta to the end of the update)
/^            SQRT(delta, delta);$/,/} LANE_END$/{
/^                    if (!whole)$/d
/^                        COPY(E(A, (size_t)j \* d + i), E(A, (size_t)i \* d + j));$/d
}
