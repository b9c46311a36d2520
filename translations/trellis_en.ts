<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Dashboard</name>
    <message>
        <location filename="../ui/dashboard.cpp" line="41"/>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="41"/>
        <source>loss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="42"/>
        <source>Throughput per rank</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="42"/>
        <source>tokens/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="43"/>
        <source>No run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="99"/>
        <source>rank %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="123"/>
        <source>step %1 / %2 · loss %3 · %4 tokens/s · step %5 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="141"/>
        <source>Run %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/dashboard.cpp" line="143"/>
        <source>%1 steps · final loss %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HistoryPanel</name>
    <message>
        <location filename="../ui/history_panel.cpp" line="16"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/history_panel.cpp" line="16"/>
        <source>Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/history_panel.cpp" line="16"/>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/history_panel.cpp" line="16"/>
        <source>Steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/history_panel.cpp" line="16"/>
        <source>Loss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../ui/main_window.cpp" line="35"/>
        <source>Trellis</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="46"/>
        <source>Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="47"/>
        <source>Run history</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="51"/>
        <source>Rank output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="55"/>
        <location filename="../ui/main_window.cpp" line="56"/>
        <source>Run history unavailable: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="70"/>
        <source>Report written to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="75"/>
        <location filename="../ui/main_window.cpp" line="177"/>
        <source>Run %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="101"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="104"/>
        <source>Open plan…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="105"/>
        <source>Open plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="106"/>
        <source>Plans (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="111"/>
        <source>Launch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="113"/>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="115"/>
        <source>Export report…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="138"/>
        <source>Plan %1 has errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="146"/>
        <source>not runnable yet: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="149"/>
        <source>Trellis — %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="150"/>
        <source>Loaded %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="162"/>
        <source>Launch failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="163"/>
        <location filename="../ui/main_window.cpp" line="164"/>
        <source>Launch failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="169"/>
        <source>$ %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="180"/>
        <source>Run failed (exit %1): %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="181"/>
        <source>Run failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="194"/>
        <source>Select a run in the history first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="197"/>
        <source>Export report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/main_window.cpp" line="198"/>
        <source>HTML (*.html)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PlanPanel</name>
    <message>
        <location filename="../ui/plan_panel.cpp" line="27"/>
        <source>Setting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="27"/>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="42"/>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;&lt;small&gt;%2&lt;/small&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="61"/>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="63"/>
        <source>preset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="64"/>
        <source>layers × hidden</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="65"/>
        <source>heads (kv)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="66"/>
        <source>ffn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="67"/>
        <source>sequence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="68"/>
        <source>vocabulary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="70"/>
        <source>Parallelism</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="71"/>
        <source>ranks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="72"/>
        <source>ZeRO stage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="73"/>
        <source>micro-batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="74"/>
        <source>global batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="74"/>
        <source>%1 sequences</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="75"/>
        <source>precision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="76"/>
        <source>Cluster</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="78"/>
        <source>%1 slots, %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="80"/>
        <source>Training</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="81"/>
        <source>steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="82"/>
        <source>learning rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="82"/>
        <source>%1 → %2, warm-up %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="83"/>
        <source>data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="84"/>
        <source>seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../ui/plan_panel.cpp" line="90"/>
        <source>&lt;b&gt;Plan not loaded&lt;/b&gt;&lt;br&gt;&lt;small&gt;%1&lt;/small&gt;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/dashboard.cpp" line="26"/>
        <source>step</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
