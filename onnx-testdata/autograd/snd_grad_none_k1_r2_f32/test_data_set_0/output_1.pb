Bgrad_updatesJ0G{Š¿q@>S
w¿’¿‹M¿HHê?’¿‹M¿HHê?G{Š¿q@>S
w¿