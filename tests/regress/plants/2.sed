# plant 2, for tests/test_regress.c: sm-sym's update forgets to mirror the upper triangle
/^ *COPY(E(A, (size_t)j \* d + i), E(A, (size_t)i \* d + j));$/d
