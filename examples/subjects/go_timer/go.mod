module go_timer

go 1.19
