Bgrad_updatesJ•*¨?5+¾u–
¿Û ?k‰¿•*¨?