Bgrad_outputJ<G{Š¿q@>S
w¿~¦h?IKÌ>V³¯½ˆMÛ=9æ?Ì4Ÿ?û}¿¡
›¾ä¿’¿‹M¿HHê?