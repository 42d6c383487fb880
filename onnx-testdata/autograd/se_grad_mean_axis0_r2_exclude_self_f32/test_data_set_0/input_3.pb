Bgrad_outputJ0
m¿ÌZ$¿Ÿûµ>Öë0½»bT¿\”>ÊÆs¿r:ñ>XûH¿/x¾>æÿ?x‡¾