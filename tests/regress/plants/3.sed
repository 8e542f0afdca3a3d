# plant 3, for tests/test_regress.c: dot sums the same terms last to first (the code after the
# return is left unreachable)
s/^    MUL(R(r), E(x, 0), E(y, 0));$/    MUL(R(r), E(x, n - 1), E(y, n - 1)); for (int j = n - 2; j >= 0; j--) { MUL(t, E(x, j), E(y, j)); ADD(R(r), R(r), t); } FRAME_END; return;/
