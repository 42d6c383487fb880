Bgrad_outputJ(RĞ?ôZ,?
4 ¿ø’Ì¿‘ã‚?r"^¿