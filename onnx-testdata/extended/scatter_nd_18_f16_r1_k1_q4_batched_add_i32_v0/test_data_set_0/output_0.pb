
BoutputJÀÆ