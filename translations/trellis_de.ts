<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>PlanFields</name>
    <message>
        <location filename="../ui/plan/field_table.cpp" line="+40"/>
        <source>Command of every rank</source>
        <translation>Befehl jedes Ranks</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON list, e.g. [&quot;python3&quot;, &quot;train.py&quot;]: run instead of trellis-trainer, with torchrun&apos;s variables set (docs/pytorch.md); never a shell line. Empty: trellis-trainer trains this plan</source>
        <translation>Eine JSON-Liste, z. B. [&quot;python3&quot;, &quot;train.py&quot;]: läuft statt trellis-trainer, mit den Variablen von torchrun (docs/pytorch.md); nie eine Shell-Zeile. Leer: trellis-trainer trainiert diesen Plan</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Its environment</source>
        <translation>Seine Umgebung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON object of NAME: &quot;value&quot; pairs added to every rank&apos;s environment</source>
        <translation>Ein JSON-Objekt aus NAME: &quot;Wert&quot;-Paaren, die der Umgebung jedes Ranks hinzugefügt werden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Its folder</source>
        <translation>Sein Ordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where the command runs: here relative to the plan&apos;s folder (empty: that folder); on ssh and Slurm hosts as written, relative to the rank&apos;s run folder there</source>
        <translation>Wo der Befehl läuft: hier relativ zum Ordner des Plans (leer: dieser Ordner); auf ssh- und Slurm-Hosts wie angegeben, relativ zum Laufordner des Ranks dort</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Plan name</source>
        <translation>Planname</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model preset</source>
        <translation>Modellvorlage</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Choosing a preset replaces every model field with the preset&apos;s</source>
        <translation>Eine Vorlage zu wählen ersetzt jedes Modellfeld durch den Wert der Vorlage</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Architecture</source>
        <translation>Architektur</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Layers</source>
        <translation>Schichten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hidden size</source>
        <translation>Hidden Size</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attention heads</source>
        <translation>Attention-Heads</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key/value heads</source>
        <translation>Key/Value-Heads</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fewer than the heads: grouped-query attention</source>
        <translation>Weniger als Attention-Heads: Grouped-Query Attention</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLP width</source>
        <translation>MLP-Breite</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sequence length</source>
        <translation>Sequenzlänge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Vocabulary</source>
        <translation>Vokabular</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts (MoE)</source>
        <translation>Experten (MoE)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>0: a dense model</source>
        <translation>0: ein dichtes Modell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts per token</source>
        <translation>Experten pro Token</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert capacity factor</source>
        <translation>Kapazitätsfaktor der Experten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Empty: dropless routing. Else each expert takes at most factor · seq_len · top_k / experts tokens of a sequence; the rest are dropped</source>
        <translation>Leer: Routing ohne Verwerfen. Sonst nimmt jeder Experte höchstens Faktor · seq_len · top_k / Experten Token einer Sequenz; der Rest wird verworfen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Load-balancing loss weight</source>
        <translation>Gewicht des Lastausgleichsverlusts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Switch Transformer&apos;s auxiliary loss, per sequence</source>
        <translation>Hilfsverlust des Switch Transformers, je Sequenz</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cluster preset</source>
        <translation>Clustervorlage</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Choosing a preset makes every node and link the preset&apos;s, keeping the node count</source>
        <translation>Eine Vorlage zu wählen übernimmt alle Knoten und Verbindungen aus der Vorlage; die Knotenzahl bleibt erhalten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes added are copies of the last one: one undo step however many</source>
        <translation>Hinzugefügte Knoten sind Kopien des letzten: ein Rückgängig-Schritt, egal wie viele</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Node list</source>
        <translation>Knotenliste</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Intra-node GB/s</source>
        <translation>Intra-Node GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Intra-node latency µs</source>
        <translation>Intra-Node-Latenz µs</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Inter-node GB/s</source>
        <translation>Inter-Node GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Inter-node latency µs</source>
        <translation>Inter-Node-Latenz µs</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Price per device-hour</source>
        <translation>Preis pro Gerätestunde</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Host memory a node (GB)</source>
        <translation>Hauptspeicher je Knoten (GB)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Each node&apos;s host memory, for checkpoints&apos; staging buffers: async saves are the default unless they would take more than half of it. Empty: not known (the trainer reads its machine&apos;s)</source>
        <translation>Hauptspeicher jedes Knotens, für die Zwischenpuffer der Checkpoints: asynchrone Sicherungen sind die Vorgabe, außer sie bräuchten mehr als die Hälfte davon. Leer: unbekannt (der Trainer liest den seiner Maschine)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Data parallel (dp)</source>
        <translation>Datenparallel (dp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor parallel (tp)</source>
        <translation>Tensorparallel (tp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offered: the divisors of the attention heads</source>
        <translation>Angeboten: die Teiler der Anzahl der Attention-Heads</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline stages (pp)</source>
        <translation>Pipeline-Stufen (pp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>At most the number of layers</source>
        <translation>Höchstens die Anzahl der Schichten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context parallel (cp)</source>
        <translation>Kontextparallel (cp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context-parallel layout</source>
        <translation>Kontextparallele Aufteilung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>zigzag: each rank holds chunks r and 2·cp−1−r of the sequence, balancing causal attention</source>
        <translation>zigzag: jeder Rang hält die Abschnitte r und 2·cp−1−r der Sequenz und gleicht so die kausale Attention aus</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>All-reduce algorithm</source>
        <translation>All-Reduce-Algorithmus</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: the library decides; hierarchical: inside each node, then across nodes, then inside again. The Collectives tab predicts each</source>
        <translation>auto: die Bibliothek entscheidet; hierarchical: erst in jedem Knoten, dann zwischen den Knoten, dann wieder im Knoten. Der Reiter „Kollektive Operationen“ sagt jeden voraus</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Expert parallel (ep)</source>
        <translation>Expertenparallel (ep)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ZeRO stage</source>
        <translation>ZeRO-Stufe</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sequence parallelism</source>
        <translation>Sequenzparallelität</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline schedule</source>
        <translation>Pipeline-Schedule</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Virtual stages</source>
        <translation>Virtuelle Stufen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Micro-batch size</source>
        <translation>Micro-Batch-Größe</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Micro-batches</source>
        <translation>Micro-Batches</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Recompute</source>
        <translation>Neuberechnung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bf16/fp16: 16-bit weights and activations, fp32 master weights, gradients and Adam moments; fp16 also scales the loss</source>
        <translation>bf16/fp16: 16-Bit-Gewichte und -Aktivierungen, fp32-Master-Gewichte, -Gradienten und -Adam-Momente; fp16 skaliert zudem den Verlust</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Gradient reduction in</source>
        <translation>Gradientenreduktion in</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bf16: data-parallel gradients travel as bf16 (half the bytes, rounded); mixed precision only</source>
        <translation>bf16: datenparallele Gradienten werden als bf16 übertragen (halbe Bytes, gerundet); nur mit gemischter Präzision</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 initial loss scale</source>
        <translation>fp16-Anfangsskalierung des Verlusts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The loss is multiplied by it before backward (65536 = 2^16)</source>
        <translation>Der Verlust wird vor dem Rückwärtsschritt damit multipliziert (65536 = 2^16)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fp16 scale growth interval</source>
        <translation>fp16-Wachstumsintervall der Skalierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps without overflow after which the scale grows</source>
        <translation>Schritte ohne Überlauf, nach denen die Skalierung wächst</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 scale growth factor</source>
        <translation>fp16-Wachstumsfaktor der Skalierung</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fp16 scale backoff</source>
        <translation>fp16-Rücknahme der Skalierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The factor the scale shrinks by when a step overflows (and is skipped)</source>
        <translation>Der Faktor, um den die Skalierung schrumpft, wenn ein Schritt überläuft (und übersprungen wird)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 minimum scale</source>
        <translation>fp16-Mindestskalierung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 skipped steps in a row</source>
        <translation>fp16: übersprungene Schritte in Folge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>More overflowing steps in a row than this stop the run</source>
        <translation>Mehr überlaufende Schritte in Folge beenden den Lauf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data-parallel sync</source>
        <translation>Datenparallele Synchronisation</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>local_sgd, diloco: the replicas step alone and meet every inner_steps steps</source>
        <translation>local_sgd, diloco: Die Replikate rechnen allein und treffen sich alle inner_steps Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Inner steps</source>
        <translation>Innere Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps each replica takes alone between outer steps</source>
        <translation>Schritte, die jedes Replikat zwischen äußeren Schritten allein macht</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outer learning rate</source>
        <translation>Äußere Lernrate</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Outer momentum</source>
        <translation>Äußeres Momentum</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Nesterov outer step</source>
        <translation>Äußerer Nesterov-Schritt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient compression</source>
        <translation>Gradientenkompression</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>powersgd: each gradient matrix all-reduced as two rank-r factors, with error feedback</source>
        <translation>powersgd: jede Gradientenmatrix als zwei Faktoren vom Rang r reduziert, mit Fehlerrückführung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compression rank</source>
        <translation>Kompressionsrang</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Clamped per matrix to min(rows, columns)</source>
        <translation>Je Matrix auf min(Zeilen, Spalten) begrenzt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warm start</source>
        <translation>Warmstart</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Each step&apos;s factors start from the last step&apos;s</source>
        <translation>Die Faktoren jedes Schritts beginnen mit denen des letzten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory accounting of</source>
        <translation>Speicherbilanz nach</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: trellis-trainer on CPUs, Megatron-LM on GPUs (DeepSpeed with ZeRO 2/3)</source>
        <translation>auto: trellis-trainer auf CPUs, Megatron-LM auf GPUs (DeepSpeed mit ZeRO 2/3)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attention kernel</source>
        <translation>Attention-Kernel</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: flash on GPUs, materialized on CPUs</source>
        <translation>auto: Flash auf GPUs, ausgeschrieben auf CPUs</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient bucket MB</source>
        <translation>Gradienten-Bucket MB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: 25 MB, or the whole model</source>
        <translation>Leer: 25 MB oder das ganze Modell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First bucket MB</source>
        <translation>Erster Bucket MB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the bucket size</source>
        <translation>Leer: die Bucket-Größe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Overlap gradient reduction</source>
        <translation>Gradientenreduktion überlappen</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Minimum learning rate</source>
        <translation>Minimale Lernrate</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warm-up steps</source>
        <translation>Warm-up-Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight decay</source>
        <translation>Weight Decay</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam β1</source>
        <translation>Adam β1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam β2</source>
        <translation>Adam β2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam ε</source>
        <translation>Adam ε</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient clip (0: off)</source>
        <translation>Gradient Clipping (0: aus)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>On NaN/Inf</source>
        <translation>Bei NaN/Inf</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data source</source>
        <translation>Datenquelle</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Data path</source>
        <translation>Datenpfad</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relative paths are relative to the plan file&apos;s folder</source>
        <translation>Relative Pfade beziehen sich auf den Ordner der Plandatei</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint every (steps)</source>
        <translation>Checkpoint alle (Schritte)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checkpoint folder</source>
        <translation>Checkpoint-Ordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints kept</source>
        <translation>Aufbewahrte Checkpoints</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint writing</source>
        <translation>Checkpoints schreiben</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it; sync: training waits for the disk. Not set: async unless the staging buffers would take more than half a node&apos;s host memory</source>
        <translation>async: jeder Rang kopiert seinen Zustand an der Schrittgrenze in den Hauptspeicher und trainiert weiter, während ein Thread ihn schreibt; sync: das Training wartet auf die Platte. Nicht gesetzt: async, außer die Zwischenpuffer bräuchten mehr als die Hälfte des Hauptspeichers eines Knotens</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>In-memory checkpoint every (steps)</source>
        <translation>Checkpoint im Arbeitsspeicher alle (Schritte)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Empty: none. Each rank&apos;s state in its node&apos;s shared memory every this many steps, the newest kept (training.checkpoint.memory.keep, 2); a restart reads it before the disk. On several nodes each node&apos;s is copied to the next node&apos;s, so a lost node&apos;s state comes from there</source>
        <translation>Leer: keine. Der Zustand jedes Rangs alle so viele Schritte im gemeinsamen Speicher seines Knotens, die neuesten behalten (training.checkpoint.memory.keep, 2); ein Neustart liest ihn vor der Platte. Auf mehreren Knoten wird der Speicher jedes Knotens auf den nächsten kopiert, sodass der Zustand eines verlorenen Knotens von dort kommt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checkpoint due while writing</source>
        <translation>Checkpoint fällig während des Schreibens</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Async saves: a save due while the one before is still being written waits for it (every save asked for is made) or is skipped (training never waits for the disk)</source>
        <translation>Asynchrone Sicherungen: eine Sicherung, die fällig wird, während die vorige noch geschrieben wird, wartet auf sie (jede verlangte Sicherung wird gemacht) oder entfällt (das Training wartet nie auf die Platte)</translation>
    </message>
    <message>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it (a save due while one is still being written is skipped); sync: training waits for the disk. Not set: async unless the staging buffers would take more than half a node&apos;s host memory</source>
        <translation type="vanished">async: jeder Rang kopiert seinen Zustand an der Schrittgrenze in den Hauptspeicher und trainiert weiter, während ein Thread ihn schreibt (eine fällige Sicherung, während noch eine geschrieben wird, entfällt); sync: das Training wartet auf die Platte. Nicht gesetzt: async, außer die Zwischenpuffer bräuchten mehr als die Hälfte des Hauptspeichers eines Knotens</translation>
    </message>
    <message>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it; sync: training waits for the disk</source>
        <translation type="vanished">async: Jeder Rang kopiert seinen Zustand an der Schrittgrenze in den Hauptspeicher und trainiert weiter, während ein Thread ihn schreibt; sync: das Training wartet auf die Platte</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Start from weights</source>
        <translation>Start mit Gewichten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A folder with model.safetensors and config.json in transformers&apos; layout (trellis-cli export-model writes one); empty: the seed&apos;s initialisation</source>
        <translation>Ein Ordner mit model.safetensors und config.json im Layout von transformers (trellis-cli export-model schreibt einen); leer: die Initialisierung aus dem Seed</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Endpoint</source>
        <translation>Endpunkt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the launcher chooses a private one</source>
        <translation>Leer: der Launcher wählt einen privaten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Heartbeat ms</source>
        <translation>Heartbeat ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relay per node</source>
        <translation>Relay je Knoten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>on: a relay process per node carries its ranks&apos; telemetry on one connection; auto: from 64 ranks</source>
        <translation>on: ein Relay-Prozess je Knoten bündelt die Telemetrie seiner Ränge auf einer Verbindung; auto: ab 64 Rängen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trace every (steps)</source>
        <translation>Tracing alle (Schritte)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Spans for the step timeline every so many steps; 0: none</source>
        <translation>Spans für die Schritt-Zeitleiste alle so vielen Schritte; 0: keine</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run history</source>
        <translation>Laufhistorie</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where this plan&apos;s runs are recorded: a file (relative to the plan&apos;s folder) or a team&apos;s postgresql://USER@HOST/DBNAME, never with a password; empty: the workbench&apos;s</source>
        <translation>Wo die Läufe dieses Plans festgehalten werden: eine Datei (relativ zum Ordner des Plans) oder die postgresql://USER@HOST/DBNAME eines Teams, nie mit Passwort; leer: die der Werkbank</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Target</source>
        <translation>Ziel</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>SSH user</source>
        <translation>SSH-Benutzer</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH port</source>
        <translation>SSH-Port</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH identity file</source>
        <translation>SSH-Schlüsseldatei</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH known-hosts file</source>
        <translation>SSH-Datei bekannter Hosts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run folder on the hosts</source>
        <translation>Lauf-Ordner auf den Hosts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trainer on the hosts</source>
        <translation>Trainer auf den Hosts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the trainer to the hosts</source>
        <translation>Trainer auf die Hosts kopieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hosts share the remote folder</source>
        <translation>Hosts teilen den entfernten Ordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MPI network between hosts</source>
        <translation>MPI-Netz zwischen den Hosts</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Address the hosts reach this machine at</source>
        <translation>Adresse, unter der die Hosts diesen Rechner erreichen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm partition</source>
        <translation>Slurm-Partition</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm account</source>
        <translation>Slurm-Konto</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm QOS</source>
        <translation>Slurm-QOS</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm time limit</source>
        <translation>Slurm-Zeitlimit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Folder shared with the Slurm nodes</source>
        <translation>Mit den Slurm-Knoten geteilter Ordner</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the run folder, which the nodes must see at the same path</source>
        <translation>Leer: der Lauf-Ordner, den die Knoten unter demselben Pfad sehen müssen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trainer on the Slurm nodes</source>
        <translation>Trainer auf den Slurm-Knoten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MPI network between Slurm nodes</source>
        <translation>MPI-Netz zwischen den Slurm-Knoten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Address the Slurm nodes reach this machine at</source>
        <translation>Adresse, unter der die Slurm-Knoten diesen Rechner erreichen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang timeout s</source>
        <translation>Hänger-Timeout s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Before a first step, how long a rank may make no progress; after it, the least the learned timeout is</source>
        <translation>Vor dem ersten Schritt, wie lange ein Rank keinen Fortschritt machen darf; danach das Mindeste, was die gelernte Frist ist</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang confirmation s</source>
        <translation>Hänger-Bestätigung s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A rank holding the others up is a stall; stopped (or silent on a remote host) this long, a hang</source>
        <translation>Ein Rank, der die anderen aufhält, ist ein Stocken; so lange angehalten (oder auf einem entfernten Host stumm), ein Hänger</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang timeout × longest step</source>
        <translation>Hänger-Frist × längster Schritt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A rank that answers but has not moved for this many times the longest step so far is hung</source>
        <translation>Ein Rank, der antwortet, aber sich so viele Male den bisher längsten Schritt lang nicht bewegt hat, hängt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restarts at most</source>
        <translation>Maximale Neustarts</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Restart back-off s</source>
        <translation>Neustart-Backoff s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a crash</source>
        <translation>Neustart bei Absturz</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a hang</source>
        <translation>Neustart bei Hänger</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a lost node</source>
        <translation>Neustart bei Knotenausfall</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Elastic (fewer nodes)</source>
        <translation>Elastisch (weniger Knoten)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert command</source>
        <translation>Alarmbefehl</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON list: the program and its arguments, never a shell line</source>
        <translation>Eine JSON-Liste: das Programm und seine Argumente, niemals eine Shell-Zeile</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert webhook</source>
        <translation>Alarm-Webhook</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Own trainer (a PyTorch or other script)</source>
        <translation>Eigener Trainer (ein PyTorch- oder anderes Skript)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Parallelism</source>
        <translation>Parallelität</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Telemetry</source>
        <translation>Telemetrie</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Launch</source>
        <translation>Start</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/dashboards/panel.cpp" line="+96"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location line="+73"/>
        <source>rank %1</source>
        <translation>Rank %1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>min – max</source>
        <translation>min – max</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>min</source>
        <translation>min</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>median of %1 ranks</source>
        <translation>Median von %1 Ranks</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>rank %1: %2%3%</source>
        <translation>Rank %1: %2%3 %</translation>
    </message>
</context>
<context>
    <name>RunWords</name>
    <message>
        <location filename="../ui/widgets/run_words.cpp" line="+11"/>
        <source>launching</source>
        <translation>startet</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>completed</source>
        <translation>abgeschlossen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>launched</source>
        <translation>gestartet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>simulated</source>
        <translation>simuliert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>collected</source>
        <translation>gesammelt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>adopted</source>
        <translation>übernommen</translation>
    </message>
</context>
<context>
    <name>trellis::launcher::document::PlanDocument</name>
    <message>
        <location filename="../launcher/document/plan_document.cpp" line="+71"/>
        <source>Untitled</source>
        <translation>Unbenannt</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Set %1 to %2</source>
        <translation>%1 auf %2 setzen</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Remove node %1</source>
        <translation>Knoten %1 entfernen</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>deepspeed: not a JSON object (a DeepSpeed config is one)</source>
        <translation>deepspeed: kein JSON-Objekt (eine DeepSpeed-Konfiguration ist eines)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Import DeepSpeed config</source>
        <translation>DeepSpeed-Konfiguration importieren</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Import Megatron-LM arguments</source>
        <translation>Megatron-LM-Argumente importieren</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>the plan has no file yet: use Save As</source>
        <translation>der Plan hat noch keine Datei: „Plan speichern unter“ verwenden</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Rebase relative paths</source>
        <translation>Relative Pfade anpassen</translation>
    </message>
</context>
<context>
    <name>trellis::ui::CompareView</name>
    <message>
        <location filename="../ui/history/compare_view.cpp" line="+18"/>
        <source>Loss (rank 0)</source>
        <translation>Loss (Rank 0)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Throughput (job)</source>
        <translation>Durchsatz (Job)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>Trellis — runs compared</source>
        <translation type="vanished">Trellis — Läufe im Vergleich</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select two or more runs in the list (Ctrl+click) and press Compare: their losses and throughput overlaid, and a table of what differs.</source>
        <translation>Zwei oder mehr Läufe in der Liste auswählen (Strg+Klick) und „Ausgewählte Läufe vergleichen“ drücken: ihre Loss- und Durchsatzkurven übereinander und eine Tabelle der Unterschiede.</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>plan</source>
        <translation>Plan</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>status</source>
        <translation>Status</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ranks</source>
        <translation>Ranks</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>final loss</source>
        <translation>finaler Loss</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tokens/s (job)</source>
        <translation>tokens/s (Job)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step ms (slowest rank)</source>
        <translation>Schritt ms (langsamster Rank)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>compute ms</source>
        <translation>Rechnen ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>exposed comm ms</source>
        <translation>nicht überdeckte Komm. ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bubble ms</source>
        <translation>Bubble ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle ms</source>
        <translation>Leerlauf ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bus GB/s</source>
        <translation>Bus-GB/s</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>peak RSS MiB</source>
        <translation>Spitzen-RSS MiB</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>plan differences</source>
        <translation>Planunterschiede</translation>
    </message>
</context>
<context>
    <name>trellis::ui::EstimatePanel</name>
    <message>
        <location filename="../ui/estimate/estimate_panel.cpp" line="+32"/>
        <location line="+470"/>
        <source>Search plans</source>
        <translation>Pläne suchen</translation>
    </message>
    <message>
        <location line="-469"/>
        <source>Use selected plan</source>
        <translation>Ausgewählten Plan übernehmen</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>GB a rank</source>
        <translation>GB pro Rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pipeline stage</source>
        <translation>Pipeline-Stufe</translation>
    </message>
    <message>
        <location line="-29"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; weight gradients &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; send / receive &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; idle (bubble) &amp;nbsp; numbers: micro-batches; the wheel zooms, dragging pans, a double click shows the whole step</source>
        <translation>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; Forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; Backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; Gewichtsgradienten &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; Senden / Empfangen &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; Leerlauf (Bubble) &amp;nbsp; Zahlen: Micro-Batches; das Mausrad zoomt, Ziehen verschiebt, ein Doppelklick zeigt den ganzen Schritt</translation>
    </message>
    <message>
        <location line="-52"/>
        <source>Timeline</source>
        <translation>Zeitleiste</translation>
    </message>
    <message>
        <location line="+183"/>
        <source>Group</source>
        <translation>Gruppe</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Operation</source>
        <translation>Operation</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MiB/step</source>
        <translation>MiB/Schritt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Calls</source>
        <translation>Aufrufe</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ms/step</source>
        <translation>ms/Schritt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Link</source>
        <translation>Verbindung</translation>
    </message>
    <message>
        <location line="-182"/>
        <source>Collectives</source>
        <translation>Kollektive Operationen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare</source>
        <translation>Vergleich</translation>
    </message>
    <message>
        <location line="+72"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>dp</source>
        <translation>dp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tp</source>
        <translation>tp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pp</source>
        <translation>pp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>cp</source>
        <translation>cp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ep</source>
        <translation>ep</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ZeRO</source>
        <translation>ZeRO</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Schedule</source>
        <translation>Schedule</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>mbs × m</source>
        <translation>mbs × m</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recompute</source>
        <translation>Neuberechnung</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tokens/s</source>
        <translation>Tokens/s</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GB</source>
        <translation>GB</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Why</source>
        <translation>Begründung</translation>
    </message>
    <message>
        <location line="-72"/>
        <source>Search</source>
        <translation>Suche</translation>
    </message>
    <message>
        <location line="+143"/>
        <location line="+78"/>
        <source>&lt;i&gt;Estimating… (what is dimmed below belongs to the plan before this edit)&lt;/i&gt;</source>
        <translation>&lt;i&gt;Schätzung läuft… (was unten abgeblendet ist, gehört zum Plan vor dieser Änderung)&lt;/i&gt;</translation>
    </message>
    <message numerus="yes">
        <location line="-60"/>
        <source>&lt;b&gt;No estimate:&lt;/b&gt; the plan has %n error(s) (see Problems in the editor). &lt;i&gt;What is dimmed below belongs to an earlier plan.&lt;/i&gt;</source>
        <translation>
            <numerusform>&lt;b&gt;Keine Schätzung:&lt;/b&gt; der Plan hat %n Fehler (siehe Probleme im Editor). &lt;i&gt;Was unten abgeblendet ist, gehört zu einem früheren Plan.&lt;/i&gt;</numerusform>
            <numerusform>&lt;b&gt;Keine Schätzung:&lt;/b&gt; der Plan hat %n Fehler (siehe Probleme im Editor). &lt;i&gt;Was unten abgeblendet ist, gehört zu einem früheren Plan.&lt;/i&gt;</numerusform>
        </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&lt;b&gt;No estimate:&lt;/b&gt; this plan runs its own trainer (own_trainer.command) and has no model section, so there is nothing to predict memory, communication or step time from. Add a model and a parallel section describing what the script trains to get an estimate; the run is watched either way.</source>
        <translation>&lt;b&gt;Keine Schätzung:&lt;/b&gt; Dieser Plan führt seinen eigenen Trainer aus (own_trainer.command) und hat keinen Modellabschnitt, daher gibt es nichts, woraus Speicher, Kommunikation oder Schrittzeit vorhergesagt werden könnten. Fügen Sie einen model- und einen parallel-Abschnitt hinzu, die beschreiben, was das Skript trainiert, um eine Schätzung zu erhalten; beobachtet wird der Lauf so oder so.</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>&lt;i&gt;No plan loaded.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Kein Plan geladen.&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>calibrated</source>
        <translation>kalibriert</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not calibrated: run trellis-cli calibrate</source>
        <translation>nicht kalibriert: trellis-cli calibrate ausführen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>One pipeline stage: no schedule and no bubble. Set pp above 1 to see the pipeline&apos;s timeline.</source>
        <translation>Eine Pipeline-Stufe: kein Schedule und keine Bubble. pp auf mehr als 1 setzen, um die Zeitleiste der Pipeline zu sehen.</translation>
    </message>
    <message numerus="yes">
        <location line="+8"/>
        <source>measuring this machine for %n rank(s) (once, a few seconds): default rates until then</source>
        <translation>
            <numerusform>vermisst diese Maschine für %n Rang (einmalig, einige Sekunden): bis dahin Standardraten</numerusform>
            <numerusform>vermisst diese Maschine für %n Ränge (einmalig, einige Sekunden): bis dahin Standardraten</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>not calibrated (the calibration failed: %1); run trellis-cli calibrate</source>
        <translation>nicht kalibriert (die Kalibrierung schlug fehl: %1); trellis-cli calibrate ausführen</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step time</source>
        <translation>Schrittzeit</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>stage %1 memory %2%3 GB</source>
        <translation>Stufe %1 Speicher %2%3 GB</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 → %2 pipeline stages</source>
        <translation>%1 → %2 Pipeline-Stufen</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;%1 tokens/s&lt;/b&gt; &amp;nbsp; step %2 = compute %3 + exposed communication %4 + bubble %5 (%6%)&lt;br&gt;MFU %7 &amp;nbsp; %8 parameters &amp;nbsp; cost %9 a run &amp;nbsp; &lt;small&gt;%10%11&lt;/small&gt;</source>
        <translation>&lt;b&gt;%1 tokens/s&lt;/b&gt; &amp;nbsp; Schritt %2 = Rechnen %3 + nicht überdeckte Kommunikation %4 + Bubble %5 (%6 %)&lt;br&gt;MFU %7 &amp;nbsp; %8 Parameter &amp;nbsp; Kosten %9 pro Lauf &amp;nbsp; &lt;small&gt;%10%11&lt;/small&gt;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>n/a (CPU)</source>
        <translation>k. A. (CPU)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 B</source>
        <translation>%1 Mrd.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 M</source>
        <translation>%1 Mio.</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Checkpoints (%1): training waits %2 a save (%3% of the steps between saves); the busiest node writes %4 GB in %5, keeping %6 GB of staging buffers</source>
        <translation>Checkpoints (%1): das Training wartet %2 je Sicherung (%3% der Schritte zwischen Sicherungen); der am stärksten belastete Knoten schreibt %4 GB in %5 und hält %6 GB Zwischenpuffer</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>(the write outlasts the steps between saves: one lands every %1 steps)</source>
        <translation>(das Schreiben dauert länger als die Schritte zwischen Sicherungen: eine wird alle %1 Schritte fertig)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Since the last estimate: %1</source>
        <translation>Seit der letzten Schätzung: %1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>parameters</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>gradients</source>
        <translation>Gradienten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>optimizer</source>
        <translation>Optimierer</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>activations</source>
        <translation>Aktivierungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>comm buffers</source>
        <translation>Komm.-Puffer</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>%1 %2 GB</source>
        <translation>%1 %2 GB</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>No data-parallel gradient all-reduce in this plan (one replica, or ZeRO&apos;s reduce-scatters): parallel.allreduce applies to the other all-reduces only.</source>
        <translation>Dieser Plan hat kein datenparalleles Gradienten-All-Reduce (ein Replikat, oder ZeROs Reduce-Scatter): parallel.allreduce gilt nur für die übrigen All-Reduces.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Gradient all-reduce&lt;/b&gt; (%1: %2 ranks on %3 node(s), %4 MiB a call, %5 calls a step)</source>
        <translation>&lt;b&gt;Gradienten-All-Reduce&lt;/b&gt; (%1: %2 Ranks auf %3 Knoten, %4 MiB je Aufruf, %5 Aufrufe je Schritt)</translation>
    </message>
    <message>
        <location line="+30"/>
        <source> (stage %1)</source>
        <translation> (Stufe %1)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>inter-node</source>
        <translation>zwischen Knoten</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>intra-node</source>
        <translation>innerhalb des Knotens</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Searching…</source>
        <translation>Suche läuft…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>%1 — not launchable by trellis-trainer yet</source>
        <translation>%1 — von trellis-trainer noch nicht startbar</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1
trellis-trainer cannot launch it yet: %2</source>
        <translation>%1
trellis-trainer kann ihn noch nicht starten: %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>No plan fits: more devices, a smaller micro-batch or a smaller model.</source>
        <translation>Kein Plan passt: mehr Geräte, ein kleinerer Micro-Batch oder ein kleineres Modell.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 plans considered, %2 valid, %3 fit</source>
        <translation>%1 Pläne geprüft, %2 gültig, %3 passen</translation>
    </message>
</context>
<context>
    <name>trellis::ui::HistoryPanel</name>
    <message>
        <source>Compare selected runs</source>
        <translation type="vanished">Ausgewählte Läufe vergleichen</translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="vanished">Lauf</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation type="vanished">Plan</translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="vanished">Status</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation type="vanished">Schritte</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="vanished">Loss</translation>
    </message>
    <message>
        <location filename="../ui/history/history_panel.cpp" line="+57"/>
        <source>Filter: words, status:failed, tag:baseline, after:2026-11-01, parallel.tp=2, model.preset=llama2-70b</source>
        <translation>Filter: Wörter, status:failed, tag:baseline, after:2026-11-01, parallel.tp=2, model.preset=llama2-70b</translation>
    </message>
    <message>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], tag:NAME, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation type="vanished">Wörter passen auf Kennung, Namen, Notiz und Tags eines Laufs. Ausdrücke: status:NAME[,NAME], tag:NAME, after:JJJJ-MM-TT, before:JJJJ-MM-TT, archived:yes|any und Planfelder nach Pfad mit = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</translation>
    </message>
    <message>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], tag:NAME, owner:NAME|me, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation type="vanished">Wörter passen auf Kennung, Namen, Notiz und Tags eines Laufs. Ausdrücke: status:NAME[,NAME], tag:NAME, owner:NAME|me, after:JJJJ-MM-TT, before:JJJJ-MM-TT, archived:yes|any und Planfelder nach Pfad mit = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], kind:launched|simulated|collected|adopted, tag:NAME, owner:NAME|me, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation>Wörter passen auf Kennung, Namen, Notiz und Tags eines Laufs. Ausdrücke: status:NAME[,NAME], kind:launched|simulated|collected|adopted, tag:NAME, owner:NAME|me, after:JJJJ-MM-TT, before:JJJJ-MM-TT, archived:yes|any und Planfelder nach Pfad mit = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Right-click to choose the columns; drag a column to move it; click to sort</source>
        <translation>Rechtsklick wählt die Spalten; Ziehen verschiebt eine Spalte; Klicken sortiert</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>&amp;Open</source>
        <translation>Ö&amp;ffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the run&apos;s dashboards in Run mode (a run still going is followed live)</source>
        <translation>Die Dashboards des Laufs im Modus Lauf öffnen (ein laufender Lauf wird live verfolgt)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Compare</source>
        <translation>&amp;Vergleichen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select two or more runs (Ctrl or Shift) to compare them</source>
        <translation>Zwei oder mehr Läufe auswählen (Strg oder Umschalt), um sie zu vergleichen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Report…</source>
        <translation>&amp;Bericht…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write the run&apos;s report (HTML or PDF)</source>
        <translation>Den Bericht des Laufs schreiben (HTML oder PDF)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Tag…</source>
        <translation>&amp;Tag…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Add a tag to the selected runs (Untag in the tag box takes one off)</source>
        <translation>Den gewählten Läufen einen Tag geben (ein führendes - im Tag-Feld nimmt ihn weg)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Note…</source>
        <translation>&amp;Notiz…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The run&apos;s note</source>
        <translation>Die Notiz des Laufs</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re&amp;name…</source>
        <translation>&amp;Umbenennen…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The run&apos;s name</source>
        <translation>Der Name des Laufs</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Archive</source>
        <translation>&amp;Archivieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hide the selected runs from the list (archived:yes shows them)</source>
        <translation>Die gewählten Läufe aus der Liste nehmen (archived:yes zeigt sie)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unarchive</source>
        <translation>Aus dem Archiv holen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+29"/>
        <source>Delete the selected runs&apos; rows and folders, after saying what goes</source>
        <translation>Zeilen und Ordner der gewählten Läufe löschen, nachdem gesagt ist, was geht</translation>
    </message>
    <message>
        <location line="-27"/>
        <source>Launch &amp;again</source>
        <translation>&amp;Erneut starten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the run&apos;s plan as a new plan and launch it</source>
        <translation>Den Plan des Laufs als neuen Plan öffnen und starten</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>1 run</source>
        <translation>1 Lauf</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 runs</source>
        <translation>%1 Läufe</translation>
    </message>
    <message>
        <location line="+62"/>
        <source>Default columns</source>
        <translation>Standardspalten</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>The filter does not apply: %1</source>
        <translation>Der Filter greift nicht: %1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Tag refused: %1</source>
        <translation>Tag abgelehnt: %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Note refused: %1</source>
        <translation>Notiz abgelehnt: %1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Name refused: %1</source>
        <translation>Name abgelehnt: %1</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Run %1 is still %2: stop it before deleting it</source>
        <translation>Lauf %1 ist noch %2: vor dem Löschen anhalten</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>• %1 (%2): its rows in the history</source>
        <translation>• %1 (%2): seine Zeilen im Verlauf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>• %1 (%2): its rows in the history and %3</source>
        <translation>• %1 (%2): seine Zeilen im Verlauf und %3</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Select the runs to delete</source>
        <translation>Die zu löschenden Läufe auswählen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Delete runs</source>
        <translation>Läufe löschen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This deletes, and cannot be undone:

%1

Archive keeps a run but hides it.</source>
        <translation>Gelöscht wird, unwiderruflich:

%1

Archivieren behält einen Lauf, blendet ihn aber aus.</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Tag runs</source>
        <translation>Läufe taggen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tag (letters, digits, . _ - + : / = @; a leading - takes it off):</source>
        <translation>Tag (Buchstaben, Ziffern, . _ - + : / = @; ein führendes - nimmt ihn weg):</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Note</source>
        <translation>Notiz</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Note on run %1 (up to 4000 characters):</source>
        <translation>Notiz zu Lauf %1 (bis zu 4000 Zeichen):</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Rename run</source>
        <translation>Lauf umbenennen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Name of run %1:</source>
        <translation>Name von Lauf %1:</translation>
    </message>
</context>
<context>
    <name>trellis::ui::LaunchDialog</name>
    <message>
        <location filename="../ui/run/launch_dialog.cpp" line="+30"/>
        <source>Launch %1</source>
        <translation>%1 starten</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Target:</source>
        <translation>Ziel:</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>SSH nodes of the plan</source>
        <translation>SSH-Knoten des Plans</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm cluster (a batch job)</source>
        <translation>Slurm-Cluster (ein Batch-Job)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This machine</source>
        <translation>Dieser Rechner</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Check</source>
        <translation>Prüfung</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Result</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Detail</source>
        <translation>Einzelheiten</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Launch</source>
        <translation>Starten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check again</source>
        <translation>Erneut prüfen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accept host key…</source>
        <translation>Host-Schlüssel annehmen…</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Checking the hosts…</source>
        <translation>Die Hosts werden geprüft…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Asking the Slurm cluster…</source>
        <translation>Frage den Slurm-Cluster…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Checked %1 of %2…</source>
        <translation>%1 von %2 geprüft…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checked %1 of %2 hosts…</source>
        <translation>%1 von %2 Hosts geprüft…</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>ok</source>
        <translation>ok</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warning</source>
        <translation>Warnung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>FAILED</source>
        <translation>FEHLGESCHLAGEN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 — fix: %2</source>
        <translation>%1 — Abhilfe: %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(this machine)</source>
        <translation>(dieser Rechner)</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>The key was not accepted: %1</source>
        <translation>Der Schlüssel wurde nicht angenommen: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Every check passed: the run can start.</source>
        <translation>Alle Prüfungen bestanden: der Lauf kann starten.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A check failed: nothing will start until it is fixed (each row says how).</source>
        <translation>Eine Prüfung ist fehlgeschlagen: nichts startet, bevor sie behoben ist (jede Zeile sagt, wie).</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Accept host key</source>
        <translation>Host-Schlüssel annehmen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 shows the key %2.

Compare it with the host&apos;s own key (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on that host) before accepting: a key you did not check could belong to someone in between.

Add it to the known hosts?</source>
        <translation>%1 zeigt den Schlüssel %2.

Vergleichen Sie ihn vor dem Annehmen mit dem eigenen Schlüssel des Hosts (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub auf diesem Host): ein ungeprüfter Schlüssel könnte einem Dritten dazwischen gehören.

Zu den bekannten Hosts hinzufügen?</translation>
    </message>
</context>
<context>
    <name>trellis::ui::MainWindow</name>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+85"/>
        <source>Trellis</source>
        <translation>Trellis</translation>
    </message>
    <message>
        <source>Edit plan</source>
        <translation type="vanished">Plan bearbeiten</translation>
    </message>
    <message>
        <source>Mesh</source>
        <translation type="vanished">Mesh</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+48"/>
        <location line="+94"/>
        <source>Plan</source>
        <translation>Plan</translation>
    </message>
    <message>
        <location line="-95"/>
        <source>Estimate</source>
        <translation>Schätzung</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+32"/>
        <source>Not changed: %1</source>
        <translation>Nicht geändert: %1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Use pinned plan</source>
        <translation>Angehefteten Plan übernehmen</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_document.cpp" line="+98"/>
        <location line="+11"/>
        <source>Run history</source>
        <translation>Laufhistorie</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+45"/>
        <source>all ranks</source>
        <translation>alle Ranks</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mpirun and workbench</source>
        <translation>mpirun und Workbench</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Rank output</source>
        <translation>Rank-Ausgabe</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+8"/>
        <source>Loss, grad norm, learning rate</source>
        <translation>Loss, Gradientennorm, Lernrate</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Throughput and step time</source>
        <translation>Durchsatz und Schrittzeit</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Step %1 marked on the charts</source>
        <translation>Schritt %1 in den Diagrammen markiert</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_history.cpp" line="+73"/>
        <source>Report written to %1</source>
        <translation>Bericht nach %1 geschrieben</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+28"/>
        <location line="+91"/>
        <location line="+271"/>
        <source>Run %1: %2</source>
        <translation>Lauf %1: %2</translation>
    </message>
    <message>
        <location line="-346"/>
        <source>Run %1: restarting (attempt %2)</source>
        <translation>Lauf %1: Neustart (Versuch %2)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>[supervisor] %1</source>
        <translation>[supervisor] %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restarting: %1</source>
        <translation>Neustart: %1</translation>
    </message>
    <message>
        <location line="+74"/>
        <location line="+2"/>
        <source>following</source>
        <translation>wird verfolgt</translation>
    </message>
    <message>
        <location line="-4"/>
        <location line="+4"/>
        <source>from the history</source>
        <translation>aus der Historie</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>[workbench] following run %1 (supervisor pid %2)</source>
        <translation>[workbench] verfolge Lauf %1 (Supervisor-PID %2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>[workbench] run %1 is not supervised any more; showing the history</source>
        <translation>[workbench] Lauf %1 wird nicht mehr überwacht; zeige die Historie</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>[workbench] run %1 had lost its supervisor; a new one (pid %2) adopts it</source>
        <translation>[workbench] Lauf %1 hatte seinen Supervisor verloren; ein neuer (PID %2) übernimmt ihn</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run %1: adopting</source>
        <translation>Lauf %1: wird übernommen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Reattached to run %1, still going</source>
        <translation>Wieder mit Lauf %1 verbunden, er läuft noch</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reattached to run %1; %2 runs are going (Run › Attach to a running run)</source>
        <translation>Wieder mit Lauf %1 verbunden; %2 Läufe sind aktiv (Lauf › Mit einem aktiven Lauf verbinden)</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>No run of this history is going now</source>
        <translation>Kein Lauf dieser Historie ist gerade aktiv</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Attach to a running run</source>
        <translation>Mit einem aktiven Lauf verbinden</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Runs going now:</source>
        <translation>Aktive Läufe:</translation>
    </message>
    <message>
        <location line="+7"/>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+53"/>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <location line="-200"/>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Throughput</source>
        <translation>Durchsatz</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Step time</source>
        <translation>Schrittzeit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline</source>
        <translation>Pipeline</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Communication</source>
        <translation>Kommunikation</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts</source>
        <translation>Experten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Health</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Events</source>
        <translation>Ereignisse</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>step %1</source>
        <translation>Schritt %1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="-9"/>
        <source>Modes</source>
        <translation>Modi</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Start</source>
        <translation>Start</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>History</source>
        <translation>Historie</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 mode (Ctrl+%2)</source>
        <translation>Modus „%1“ (Strg+%2)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Reset the dashboard layout</source>
        <translation>Dashboard-Layout zurücksetzen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset zoom of the step charts</source>
        <translation>Zoom der Schritt-Diagramme zurücksetzen</translation>
    </message>
    <message>
        <location line="+15"/>
        <source> · run %1 (%2)</source>
        <translation> · Lauf %1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1[*]%2 — Trellis</source>
        <translation>%1[*]%2 — Trellis</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Plan: %1%2</source>
        <translation>Plan: %1%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · no run open</source>
        <translation>%1 · kein Lauf geöffnet</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 · Run: %2, %3</source>
        <translation>%1 · Lauf: %2, %3</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_history.cpp" line="-16"/>
        <source>Run %1 opened: its dashboards are in Run mode (Ctrl+3)</source>
        <translation>Lauf %1 geöffnet: seine Dashboards sind im Modus „Lauf“ (Strg+3)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No run open</source>
        <translation>Kein Lauf geöffnet</translation>
    </message>
    <message>
        <location line="+61"/>
        <source>Select a run to see its summary here; select two or more and press Compare to set them side by side.</source>
        <translation>Einen Lauf wählen, um hier seine Übersicht zu sehen; zwei oder mehr wählen und Vergleichen drücken, um sie nebeneinander zu stellen.</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>run %1 is being followed (its records go to %2): switch once it has ended</source>
        <translation>Lauf %1 wird verfolgt (seine Daten gehen nach %2): wechseln Sie, wenn er beendet ist</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the workbench listens for jobs into %1: stop listening first</source>
        <translation>die Werkbank lauscht auf Jobs für %1: beenden Sie zuerst das Lauschen</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>[workbench] run history: %1</source>
        <translation>[Werkbank] Laufhistorie: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run history: %1</source>
        <translation>Laufhistorie: %1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>A run is being followed: launch again when it has ended</source>
        <translation>Ein Lauf wird verfolgt: erneut starten, wenn er geendet hat</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Reading the run&apos;s plan from the history: it launches when read</source>
        <translation>Der Plan des Laufs wird aus dem Verlauf gelesen: er startet, sobald er gelesen ist</translation>
    </message>
    <message>
        <source>The run&apos;s plan is still being read from the history; try again in a moment</source>
        <translation type="vanished">Der Plan des Laufs wird noch aus dem Verlauf gelesen; gleich noch einmal versuchen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The run&apos;s recorded plan cannot be read: %1</source>
        <translation>Der aufgezeichnete Plan des Laufs ist nicht lesbar: %1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+19"/>
        <source>Run %1: %2 (a job Trellis did not launch: watched, not stopped, from here)</source>
        <translation>Lauf %1: %2 (ein Job, den Trellis nicht gestartet hat: von hier beobachtet, nicht gestoppt)</translation>
    </message>
    <message>
        <location line="+94"/>
        <source>following a job Trellis did not launch</source>
        <translation>verfolgt einen Job, den Trellis nicht gestartet hat</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>Launch</source>
        <translation>Starten</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Asked the supervisor to stop run %1</source>
        <translation>Supervisor gebeten, Lauf %1 zu stoppen</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Attach…</source>
        <translation>Verbinden…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Follow a run that is going now (runs outlive this window)</source>
        <translation>Einem aktiven Lauf folgen (Läufe überdauern dieses Fenster)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export report…</source>
        <translation>Bericht exportieren…</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+49"/>
        <location line="+15"/>
        <source>Listen for jobs…</source>
        <translation>Auf Jobs lauschen…</translation>
    </message>
    <message>
        <location line="-58"/>
        <source>Listen for jobs</source>
        <translation>Auf Jobs lauschen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jobs Trellis did not launch (sbatch, torchrun, mpirun by hand) report to this address; each becomes a run here:</source>
        <translation>Jobs, die Trellis nicht gestartet hat (sbatch, torchrun, mpirun von Hand), melden sich an dieser Adresse; jeder wird hier ein Lauf:</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Watch jobs Trellis did not launch: they report here with two environment variables</source>
        <translation>Jobs beobachten, die Trellis nicht gestartet hat: Sie melden sich hier mit zwei Umgebungsvariablen</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Stop listening</source>
        <translation>Lauschen beenden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>[workbench] starting a collector (pid %1) on %2; its log: %3</source>
        <translation>[Workbench] starte einen Collector (PID %1) an %2; sein Protokoll: %3</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>[workbench] stopped listening for jobs (collector pid %1)</source>
        <translation>[Workbench] lauscht nicht mehr auf Jobs (Collector-PID %1)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stopped listening for jobs</source>
        <translation>Lauschen auf Jobs beendet</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>the collector ended (see %1)</source>
        <translation>der Collector hat sich beendet (siehe %1)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>[workbench] listening for jobs at %1; give each job: TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2</source>
        <translation>[Workbench] lauscht auf Jobs an %1; jedem Job mitgeben: TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Listening for jobs at %1</source>
        <translation>Lauscht auf Jobs an %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jobs report with TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2; click to stop listening</source>
        <translation>Jobs melden sich mit TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2; klicken, um das Lauschen zu beenden</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Following run %1, a job Trellis did not launch</source>
        <translation>Verfolge Lauf %1, einen Job, den Trellis nicht gestartet hat</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Trellis did not launch this job: stop it with its own launcher (scancel, kill, torchrun)</source>
        <translation>Trellis hat diesen Job nicht gestartet: Beenden Sie ihn mit seinem eigenen Starter (scancel, kill, torchrun)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the run</source>
        <translation>Den Lauf beenden</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>This plan can be estimated but not run yet</source>
        <translation>Dieser Plan kann geschätzt, aber noch nicht ausgeführt werden</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Launch failed: the plan records its runs in %1, and the workbench cannot switch to it: %2</source>
        <translation>Start fehlgeschlagen: der Plan hält seine Läufe in %1 fest, und die Werkbank kann nicht dorthin wechseln: %2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>[workbench] the plan records its runs in %1 (telemetry.history)</source>
        <translation>[Werkbank] der Plan hält seine Läufe in %1 fest (telemetry.history)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Launch failed: %1</source>
        <translation>Start fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location line="-10"/>
        <location line="+11"/>
        <location line="+1"/>
        <source>Launch failed</source>
        <translation>Start fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>[workbench] run %1: supervisor pid %2, log %3</source>
        <translation>[workbench] Lauf %1: Supervisor-PID %2, Log %3</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Run %1: launching</source>
        <translation>Lauf %1: wird gestartet</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>launching</source>
        <translation>wird gestartet</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>[alert: %1] %2</source>
        <translation>[alert: %1] %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert (%1): %2</source>
        <translation>Alarm (%1): %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Trellis: %1</source>
        <translation>Trellis: %1</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Run failed (exit %1): %2</source>
        <translation>Lauf fehlgeschlagen (Exit-Code %1): %2</translation>
    </message>
    <message>
        <source>Run failed</source>
        <translation type="vanished">Lauf fehlgeschlagen</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Select a run in the history first</source>
        <translation>Zuerst einen Lauf in der Historie auswählen</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Export report</source>
        <translation>Bericht exportieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>HTML (*.html)</source>
        <translation>HTML (*.html)</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>rank %1</source>
        <translation>Rank %1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_document.cpp" line="-42"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;New plan</source>
        <translation>&amp;Neuer Plan</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Open plan…</source>
        <translation>Plan ö&amp;ffnen…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Open plan</source>
        <translation>Plan öffnen</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+249"/>
        <source>Plans (*.json)</source>
        <translation>Pläne (*.json)</translation>
    </message>
    <message>
        <location line="-245"/>
        <source>Open &amp;recent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save plan</source>
        <translation>Plan &amp;speichern</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save plan &amp;as…</source>
        <translation>Plan speichern &amp;unter…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Import</source>
        <translation>&amp;Importieren</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Run &amp;history…</source>
        <translation>&amp;Laufhistorie…</translation>
    </message>
    <message>
        <source>The run history this workbench opens from its next start: a file, or a team&apos;s PostgreSQL database as postgresql://USER@HOST/DBNAME (the password from ~/.pgpass, PGPASSWORD or a service file). Empty: %1.
Now: %2</source>
        <translation type="vanished">Die Laufhistorie, die diese Werkbank ab ihrem nächsten Start öffnet: eine Datei oder die PostgreSQL-Datenbank eines Teams als postgresql://BENUTZER@HOST/DATENBANK (das Passwort aus ~/.pgpass, PGPASSWORD oder einer Service-Datei). Leer: %1.
Jetzt: %2</translation>
    </message>
    <message>
        <source>From its next start the workbench opens %1 (--db and TRELLIS_HISTORY come first)</source>
        <translation type="vanished">Ab ihrem nächsten Start öffnet die Werkbank %1 (--db und TRELLIS_HISTORY haben Vorrang)</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Cannot read %1 (or it is over %2 MiB)</source>
        <translation>%1 kann nicht gelesen werden (oder ist größer als %2 MiB)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>DeepSpeed config file…</source>
        <translation>DeepSpeed-Konfigurationsdatei…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Import a DeepSpeed config</source>
        <translation>DeepSpeed-Konfiguration importieren</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>JSON (*.json);;All files (*)</source>
        <translation>JSON (*.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Megatron-LM arguments (paste)…</source>
        <translation>Megatron-LM-Argumente (einfügen)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+8"/>
        <source>Import Megatron-LM arguments</source>
        <translation>Megatron-LM-Argumente importieren</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>The launch line or its arguments (continuations, comments and torchrun&apos;s own options are understood):</source>
        <translation>Die Startzeile oder ihre Argumente (Fortsetzungszeilen, Kommentare und die eigenen Optionen von torchrun werden erkannt):</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Megatron-LM arguments file…</source>
        <translation>Megatron-LM-Argumentdatei…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="-65"/>
        <source>E&amp;xport plan as</source>
        <translation>Plan &amp;exportieren als</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>The run history this workbench reads, now and from its next start: a file, or a team&apos;s PostgreSQL database as postgresql://USER@HOST/DBNAME (the password from ~/.pgpass, PGPASSWORD or a service file). Empty: %1.
Now: %2</source>
        <translation>Die Laufhistorie, die diese Werkbank liest, jetzt und ab dem nächsten Start: eine Datei oder die PostgreSQL-Datenbank eines Teams als postgresql://USER@HOST/DBNAME (das Passwort aus ~/.pgpass, PGPASSWORD oder einer Service-Datei). Leer: %1.
Jetzt: %2</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Not switched now: %1. From its next start the workbench opens %2</source>
        <translation>Jetzt nicht gewechselt: %1. Ab dem nächsten Start öffnet die Werkbank %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run history: %1 (from the next start too, unless --db or TRELLIS_HISTORY name another)</source>
        <translation>Laufhistorie: %1 (auch ab dem nächsten Start, sofern --db oder TRELLIS_HISTORY keine andere nennen)</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>Wrote %1</source>
        <translation>%1 geschrieben</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Could not write %1: %2</source>
        <translation>%1 konnte nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>DeepSpeed config…</source>
        <translation>DeepSpeed-Konfiguration…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export as a DeepSpeed config</source>
        <translation>Als DeepSpeed-Konfiguration exportieren</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Megatron-LM arguments…</source>
        <translation>Megatron-LM-Argumente…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export as Megatron-LM arguments</source>
        <translation>Als Megatron-LM-Argumente exportieren</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Text (*.txt *.sh);;All files (*)</source>
        <translation>Text (*.txt *.sh);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location line="-81"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location line="+87"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation>&amp;Rückgängig</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation>&amp;Wiederherstellen</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;Settings</source>
        <translation>&amp;Einstellungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Language</source>
        <translation>&amp;Sprache</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+13"/>
        <source>System default</source>
        <translation>Systemstandard</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>The language changes the next time Trellis starts.</source>
        <translation>Die Sprache wechselt beim nächsten Start von Trellis.</translation>
    </message>
    <message>
        <source>%1[*] — Trellis</source>
        <translation type="vanished">%1[*] — Trellis</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Theme</source>
        <translation>&amp;Design</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The theme changes the next time Trellis starts.</source>
        <translation>Das Design wechselt beim nächsten Start von Trellis.</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>The plan has errors: fix them to launch (see Problems)</source>
        <translation>Der Plan hat Fehler: zum Starten beheben (siehe Probleme)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the plan on this machine (Ctrl+R)</source>
        <translation>Den Plan auf diesem Rechner ausführen (Strg+R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This plan can be estimated but not run yet:
%1</source>
        <translation>Dieser Plan kann geschätzt, aber noch nicht ausgeführt werden:
%1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Not opened: %1: %2</source>
        <translation>Nicht geöffnet: %1: %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot open the plan</source>
        <translation>Plan kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 was not opened; the open plan is unchanged.

%2</source>
        <translation>%1 wurde nicht geöffnet; der geöffnete Plan bleibt unverändert.

%2</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Opened %1 — it has problems to fix before it can run</source>
        <translation>%1 geöffnet — vor dem Ausführen sind Probleme zu beheben</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Opened %1</source>
        <translation>%1 geöffnet</translation>
    </message>
    <message>
        <location line="+22"/>
        <location line="+7"/>
        <source>Saved %1</source>
        <translation>%1 gespeichert</translation>
    </message>
    <message>
        <location line="-7"/>
        <location line="+7"/>
        <source>Not saved: %1</source>
        <translation>Nicht gespeichert: %1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Save plan</source>
        <translation>Plan speichern</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Unsaved changes</source>
        <translation>Ungespeicherte Änderungen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The plan %1 has changes that are not saved.</source>
        <translation>Der Plan %1 hat ungespeicherte Änderungen.</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>DeepSpeed config</source>
        <translation>DeepSpeed-Konfiguration</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Megatron-LM arguments</source>
        <translation>Megatron-LM-Argumente</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>Imported the %1 (Edit › Undo to go back); %n warning(s)</source>
        <translation>
            <numerusform>%1 importiert (zurück mit Bearbeiten › Rückgängig); %n Warnung</numerusform>
            <numerusform>%1 importiert (zurück mit Bearbeiten › Rückgängig); %n Warnungen</numerusform>
        </translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not imported (the plan is unchanged): %1</source>
        <translation>Nicht importiert (der Plan ist unverändert): %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Imported the %1</source>
        <translation>%1 importiert</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The %1 were not imported</source>
        <translation>%1: nicht importiert</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Imported, with these notes:</source>
        <translation>Importiert, mit diesen Hinweisen:</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The plan is unchanged:</source>
        <translation>Der Plan ist unverändert:</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Apply searched plan (dp %1 · tp %2 · pp %3 · cp %4)</source>
        <translation>Gefundenen Plan übernehmen (dp %1 · tp %2 · pp %3 · cp %4)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Using the searched plan (Edit › Undo to go back): dp %1 · tp %2 · pp %3 · cp %4</source>
        <translation>Gefundener Plan wird verwendet (zurück mit Bearbeiten › Rückgängig): dp %1 · tp %2 · pp %3 · cp %4</translation>
    </message>
</context>
<context>
    <name>trellis::ui::MeshView</name>
    <message>
        <location filename="../ui/plan/mesh_view.cpp" line="+43"/>
        <source>pipeline stage</source>
        <translation>Pipeline-Stufe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tensor-parallel rank</source>
        <translation>Tensorparallel-Rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>context-parallel rank</source>
        <translation>Kontextparallel-Rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>data-parallel replica</source>
        <translation>Datenparallel-Replikat</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>expert-parallel rank</source>
        <translation>Expertenparallel-Rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location line="+339"/>
        <source>rank %1 on %2</source>
        <translation>Rank %1 auf %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tp %1 · cp %2 · dp %3 · pp %4</source>
        <translation>tp %1 · cp %2 · dp %3 · pp %4</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>tensor-parallel group: %1</source>
        <translation>Tensorparallel-Gruppe: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>context-parallel group: %1</source>
        <translation>Kontextparallel-Gruppe: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>data-parallel group: %1</source>
        <translation>Datenparallel-Gruppe: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert-parallel group: %1</source>
        <translation>Expertenparallel-Gruppe: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pipeline group: %1</source>
        <translation>Pipeline-Gruppe: %1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>%1 · %2 slots · %3</source>
        <translation>%1 · %2 Slots · %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>
no ranks (idle)</source>
        <translation>
keine Ranks (ungenutzt)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>
ranks %1</source>
        <translation>
Ranks %1</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source> (%n slot(s) idle)</source>
        <translation>
            <numerusform> (%n Slot ungenutzt)</numerusform>
            <numerusform> (%n Slots ungenutzt)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+9"/>
        <source>
stage %1 · tp %2 · cp %3 · dp %4</source>
        <translation>
Stufe %1 · tp %2 · cp %3 · dp %4</translation>
    </message>
    <message>
        <location filename="../ui/plan/mesh_view_paint.cpp" line="+35"/>
        <source>colour: %1</source>
        <translation>Farbe: %1</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>one tile a node, one stripe a rank (zoom in for ranks)</source>
        <translation>eine Kachel pro Knoten, ein Streifen pro Rank (für Ranks hineinzoomen)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>outlines: tensor-parallel groups (red: spans nodes)</source>
        <translation>Umrisse: Tensorparallel-Gruppen (rot: über Knoten hinweg)</translation>
    </message>
    <message>
        <location line="+154"/>
        <source>No plan loaded</source>
        <translation>Kein Plan geladen</translation>
    </message>
</context>
<context>
    <name>trellis::ui::PlanPanel</name>
    <message>
        <location filename="../ui/plan/plan_panel.cpp" line="+30"/>
        <source>Setting</source>
        <translation>Einstellung</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Value</source>
        <translation>Wert</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Document</source>
        <translation>Dokument</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;&lt;small&gt;%2&lt;/small&gt;</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;&lt;small&gt;%2&lt;/small&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(unnamed plan)</source>
        <translation>(unbenannter Plan)</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>Estimate only: trellis-trainer cannot run this plan yet (%n reason(s); hover for them)</source>
        <translation>
            <numerusform>Nur Schätzung: trellis-trainer kann diesen Plan noch nicht ausführen (%n Grund; mit der Maus darauf zeigen)</numerusform>
            <numerusform>Nur Schätzung: trellis-trainer kann diesen Plan noch nicht ausführen (%n Gründe; mit der Maus darauf zeigen)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>preset</source>
        <translation>Vorlage</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>architecture</source>
        <translation>Architektur</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>experts</source>
        <translation>Experten</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1, top %2</source>
        <translation>%1, Top-%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>layers × hidden</source>
        <translation>Schichten × Hidden</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>heads (kv)</source>
        <translation>Heads (KV)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ffn</source>
        <translation>FFN</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sequence</source>
        <translation>Sequenz</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>vocabulary</source>
        <translation>Vokabular</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Parallelism</source>
        <translation>Parallelität</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ranks</source>
        <translation>Ranks</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert parallel</source>
        <translation>Expertenparallel</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>schedule</source>
        <translation>Schedule</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>, %1 virtual stages</source>
        <translation>, %1 virtuelle Stufen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>recompute</source>
        <translation>Neuberechnung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ZeRO stage</source>
        <translation>ZeRO-Stufe</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>micro-batch</source>
        <translation>Micro-Batch</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 × %2 micro-batches</source>
        <translation>%1 × %2 Micro-Batches</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>global batch</source>
        <translation>globaler Batch</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 sequences</source>
        <translation>%1 Sequenzen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cluster</source>
        <translation>Cluster</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 slots, %2</source>
        <translation>%1 Slots, %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 → %2, warm-up %3</source>
        <translation>%1 → %2, Warm-up %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>data</source>
        <translation>Daten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;b&gt;Plan not loaded&lt;/b&gt;&lt;br&gt;&lt;small&gt;%1&lt;/small&gt;</source>
        <translation>&lt;b&gt;Plan nicht geladen&lt;/b&gt;&lt;br&gt;&lt;small&gt;%1&lt;/small&gt;</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunHeader</name>
    <message>
        <source>Loss</source>
        <translation type="vanished">Loss</translation>
    </message>
    <message>
        <source>loss</source>
        <translation type="vanished">Loss</translation>
    </message>
    <message>
        <source>Throughput per rank</source>
        <translation type="vanished">Durchsatz pro Rank</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="vanished">tokens/s</translation>
    </message>
    <message>
        <source>No run</source>
        <translation type="vanished">Kein Lauf</translation>
    </message>
    <message>
        <location filename="../ui/run/run_header.cpp" line="+19"/>
        <source>No run open: launch the plan (Ctrl+R) or open a run from the history.</source>
        <translation>Kein Lauf geöffnet: den Plan starten (Strg+R) oder einen Lauf aus der Historie öffnen.</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>step %1 / %2 · loss %3 · %4 tokens/s · step %5 ms · %6 ranks</source>
        <translation>Schritt %1 / %2 · Loss %3 · %4 tokens/s · Schritt %5 ms · %6 Ranks</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Run %1: %2</source>
        <translation>Lauf %1: %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 steps · final loss %2 · %3 ranks</source>
        <translation>%1 Schritte · finaler Loss %2 · %3 Ranks</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunSummaryView</name>
    <message>
        <location filename="../ui/history/run_summary_view.cpp" line="+20"/>
        <source>Loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Events</source>
        <translation>Ereignisse</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Select a run to see its summary here; select two or more and press Compare to set them side by side.</source>
        <translation>Einen Lauf wählen, um hier seine Übersicht zu sehen; zwei oder mehr wählen und Vergleichen drücken, um sie nebeneinander zu stellen.</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>plan %1</source>
        <translation>Plan %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>1 rank</source>
        <translation>1 Rang</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 ranks</source>
        <translation>%1 Ränge</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>%1, launched from %2</source>
        <translation>%1, gestartet von %2</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>collected, watched from %1</source>
        <translation>gesammelt, beobachtet von %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>simulated ranks, from %1</source>
        <translation>simulierte Ränge, von %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1, adopted by %2</source>
        <translation>%1, übernommen von %2</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>step %1 of %2</source>
        <translation>Schritt %1 von %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>final loss %1</source>
        <translation>letzter Loss %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 tokens/s</source>
        <translation>%1 Token/s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MFU %1%</source>
        <translation>MFU %1%</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>started %1</source>
        <translation>gestartet %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Tags: %1</source>
        <translation>Tags: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Recorded by %1</source>
        <translation>Aufgezeichnet von %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Files: %1 on %2</source>
        <translation>Dateien: %1 auf %2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>model %1 · %2</source>
        <translation>Modell %1 · %2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>(no events)</source>
        <translation>(keine Ereignisse)</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunTableModel</name>
    <message>
        <location filename="../ui/history/run_table_model.cpp" line="+102"/>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plan</source>
        <translation>Plan</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ranks</source>
        <translation>Ränge</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Layout</source>
        <translation>Aufteilung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Final loss</source>
        <translation>Letzter Loss</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokens/s</source>
        <translation>Token/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Host or target</source>
        <translation>Host oder Ziel</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tags</source>
        <translation>Tags</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Note</source>
        <translation>Notiz</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Command</source>
        <translation>Befehl</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 (archived)</source>
        <translation>%1 (archiviert)</translation>
    </message>
</context>
<context>
    <name>trellis::ui::TimelineChart</name>
    <message>
        <location filename="../ui/widgets/timeline_chart.cpp" line="+109"/>
        <source>No timeline yet.</source>
        <translation>Noch keine Zeitleiste.</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Predicted by the schedule simulator: %1 ms, bubble %2%</source>
        <translation>Vorhersage des Schedule-Simulators: %1 ms, Bubble %2 %</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Measured, step %1: %2 ms, bubble %3%</source>
        <translation>Gemessen, Schritt %1: %2 ms, Bubble %3 %</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>  (zoom ×%1; double-click for the whole step)</source>
        <translation>  (Zoom ×%1; Doppelklick zeigt den ganzen Schritt)</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>%1 (%2%)</source>
        <translation>%1 (%2 %)</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>%1 · micro-batch %2 · chunk %3
%4 – %5 ms</source>
        <translation>%1 · Micro-Batch %2 · Chunk %3
%4 – %5 ms</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1: idle (bubble) at %2 ms</source>
        <translation>%1: Leerlauf (Bubble) bei %2 ms</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::BreakdownPanel</name>
    <message>
        <location filename="../ui/dashboards/breakdown_panel.cpp" line="+22"/>
        <source>compute</source>
        <translation>Rechnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exposed communication</source>
        <translation>nicht überdeckte Kommunikation</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pipeline bubble</source>
        <translation>Pipeline-Bubble</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle</source>
        <translation>Leerlauf</translation>
    </message>
    <message>
        <source>Step time breakdown (median rank)</source>
        <translation type="vanished">Aufschlüsselung der Schrittzeit (Median-Rank)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>checkpoint (between steps)</source>
        <translation>Checkpoint (zwischen den Schritten)</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Checkpoints: %1 ms a save (%2% of a step)</source>
        <translation>Checkpoints: %1 ms je Sicherung (%2% eines Schritts)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · written in %1 ms</source>
        <translation> · geschrieben in %1 ms</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · steps beside a write %1%2%</source>
        <translation> · Schritte neben dem Schreiben %1%2%</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Checkpoints put in place: %4; training waited %1 ms a save (%2% of a step, at most %3 ms)</source>
        <translation>Checkpoints abgeschlossen: %4; das Training wartete %1 ms je Sicherung (%2% eines Schritts, höchstens %3 ms)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>; each written in %1 ms</source>
        <translation>; jede in %1 ms geschrieben</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>; steps beside a background write %1% slower (%2 of %3 steps)</source>
        <translation>; Schritte neben einem Schreiben im Hintergrund %1% langsamer (%2 von %3 Schritten)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>; steps beside a background write %1% faster (%2 of %3 steps)</source>
        <translation>; Schritte neben einem Schreiben im Hintergrund %1% schneller (%2 von %3 Schritten)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>over steps (median rank)</source>
        <translation>über die Schritte (Median-Rank)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>per pipeline stage (latest steps)</source>
        <translation>pro Pipeline-Stufe (letzte Schritte)</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>predicted step (calibrated)</source>
        <translation>vorhergesagter Schritt (kalibriert)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>predicted step (default rates)</source>
        <translation>vorhergesagter Schritt (Standardraten)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>bubble % measured (right axis)</source>
        <translation>Bubble % gemessen (rechte Achse)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>bubble % predicted</source>
        <translation>Bubble % vorhergesagt</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>pipeline stage (no coordinates reported yet)</source>
        <translation>Pipeline-Stufe (noch keine Koordinaten gemeldet)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pipeline stage</source>
        <translation>Pipeline-Stufe</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>bubble % of the step</source>
        <translation>Bubble in % des Schritts</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Launch the plan to see where each step&apos;s time goes: compute, exposed communication, pipeline bubble and idle time (the median rank, or each pipeline stage).</source>
        <translation>Den Plan starten, um zu sehen, wohin die Zeit jedes Schritts geht: Rechnen, nicht überdeckte Kommunikation, Pipeline-Bubble und Leerlauf (der Median-Rank oder jede Pipeline-Stufe).</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Waiting for the ranks&apos; step-time breakdown (it comes with their step reports).</source>
        <translation>Warten auf die Aufschlüsselung der Schrittzeit der Ranks (sie kommt mit ihren Schrittberichten).</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/breakdown_panel.h" line="+26"/>
        <source>Step time breakdown</source>
        <translation>Aufschlüsselung der Schrittzeit</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::CommunicationPanel</name>
    <message>
        <location filename="../ui/dashboards/communication_panel.cpp" line="+22"/>
        <source>group</source>
        <translation>Gruppe</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>operation</source>
        <translation>Operation</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ranks</source>
        <translation>Ranks</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MB</source>
        <translation>MB</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bus GB/s</source>
        <translation>Bus-GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>slowest rank (GB/s)</source>
        <translation>langsamster Rank (GB/s)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>dp traffic: %1</source>
        <translation>dp-Verkehr: %1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 (%2% of peak)</source>
        <translation>%1 (%2 % des Spitzenwerts)</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Launch the plan to see each collective (group, operation, bytes, time, bus bandwidth) and its slowest rank.</source>
        <translation>Den Plan starten, um jede kollektive Operation (Gruppe, Operation, Bytes, Zeit, Bus-Bandbreite) und ihren langsamsten Rank zu sehen.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>This run has one rank: nothing to communicate.</source>
        <translation>Dieser Lauf hat einen Rank: nichts zu kommunizieren.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No collective reported yet.</source>
        <translation>Noch keine kollektive Operation gemeldet.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/communication_panel.h" line="+16"/>
        <source>Communication</source>
        <translation>Kommunikation</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::EventsPanel</name>
    <message>
        <location filename="../ui/dashboards/events_panel.cpp" line="+15"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>message</source>
        <translation>Meldung</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Launch the plan to see the run&apos;s events here: stragglers, hangs, restarts, checkpoints and alerts, each with its step (click one to mark it on the charts).</source>
        <translation>Den Plan starten, um hier die Ereignisse des Laufs zu sehen: Nachzügler, Hänger, Neustarts, Checkpoints und Alarme, jeweils mit ihrem Schritt (eines anklicken, um es in den Diagrammen zu markieren).</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No events in this run: no straggler, hang, restart or alert so far.</source>
        <translation>Keine Ereignisse in diesem Lauf: bisher kein Nachzügler, Hänger, Neustart oder Alarm.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/events_panel.h" line="+15"/>
        <source>Events</source>
        <translation>Ereignisse</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::ExpertsPanel</name>
    <message>
        <location filename="../ui/dashboards/experts_panel.cpp" line="+14"/>
        <source>Expert load per step</source>
        <translation>Expertenlast je Schritt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>busiest expert / mean</source>
        <translation>meistgenutzter Experte / Mittel</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Share of each layer&apos;s tokens</source>
        <translation>Anteil an den Token jeder Schicht</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>layer</source>
        <translation>Schicht</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>dropped %</source>
        <translation>verworfen %</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert</source>
        <translation>Experte</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>No routing reported: the run&apos;s model has no experts, or no step has finished yet.</source>
        <translation>Kein Routing gemeldet: das Modell des Laufs hat keine Experten, oder noch kein Schritt ist fertig.</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>%1 layers × %2 experts. Step %3: worst layer&apos;s busiest expert %4× the mean, %5% of choices dropped, load-balancing loss %6.</source>
        <translation>%1 Schichten × %2 Experten. Schritt %3: meistgenutzter Experte der ungünstigsten Schicht %4× das Mittel, %5% der Zuweisungen verworfen, Lastausgleichsverlust %6.</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Launch a plan with experts (model › moe) to see each expert&apos;s share of the tokens and the load imbalance step by step.</source>
        <translation>Einen Plan mit Experten (model › moe) starten, um den Anteil jedes Experten an den Token und das Lastungleichgewicht Schritt für Schritt zu sehen.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run has no experts: its model is dense. A plan with model › moe shows the routing here.</source>
        <translation>Dieser Lauf hat keine Experten: sein Modell ist dicht. Ein Plan mit model › moe zeigt hier das Routing.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/experts_panel.h" line="+17"/>
        <source>Experts</source>
        <translation>Experten</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::HealthPanel</name>
    <message>
        <location filename="../ui/dashboards/health_panel.h" line="+16"/>
        <source>Telemetry health</source>
        <translation>Telemetrie-Zustand</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/health_panel.cpp" line="+10"/>
        <source>ranks reporting</source>
        <translation>meldende Ranks</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>messages received</source>
        <translation>empfangene Nachrichten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>lost (given up by ranks)</source>
        <translation>verloren (von Ranks aufgegeben)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicates</source>
        <translation>Duplikate</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>out of order (asked again)</source>
        <translation>außer der Reihe (erneut angefordert)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rejected frames</source>
        <translation>abgewiesene Frames</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dropped at the senders</source>
        <translation>bei den Sendern verworfen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>feed gaps (this window)</source>
        <translation>Lücken im Datenstrom (dieses Fenster)</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>Launch the plan to see the telemetry&apos;s health: messages received, lost, duplicated, out of order, rejected and dropped at the ranks.</source>
        <translation>Den Plan starten, um den Zustand der Telemetrie zu sehen: empfangene, verlorene, doppelte, außer der Reihe eingetroffene, abgewiesene und bei den Ranks verworfene Nachrichten.</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::HeatMapPanel</name>
    <message>
        <location filename="../ui/dashboards/heatmap_panel.cpp" line="+19"/>
        <source>rank</source>
        <translation>Rank</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>rank %1 %2%3%</source>
        <translation>Rank %1 %2%3 %</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 ranks, none stands out</source>
        <translation>%1 Ranks, keiner fällt auf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 ranks; furthest from the median: %2</source>
        <translation>%1 Ranks; am weitesten vom Median entfernt: %2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Launch the plan to see every rank&apos;s step time (or another metric) step by step, one row a rank: a slow or stalled rank stands out as a stripe.</source>
        <translation>Den Plan starten, um die Schrittzeit (oder eine andere Metrik) jedes Ranks Schritt für Schritt zu sehen, eine Zeile pro Rank: ein langsamer oder hängender Rank fällt als Streifen auf.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Waiting for the ranks&apos; first steps.</source>
        <translation>Warten auf die ersten Schritte der Ranks.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/heatmap_panel.h" line="+17"/>
        <source>Rank health</source>
        <translation>Rank-Zustand</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::MemoryPanel</name>
    <message>
        <source>Memory per rank</source>
        <translation type="vanished">Speicher pro Rank</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation type="vanished">MiB</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/memory_panel.cpp" line="+10"/>
        <source>MiB a rank</source>
        <translation>MiB pro Rank</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>largest rank</source>
        <translation>größter Rank</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>median rank</source>
        <translation>Median-Rank</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>predicted (busiest stage)</source>
        <translation>vorhergesagt (am stärksten belastete Stufe)</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Launch the plan to see each rank&apos;s memory by category (parameters, gradients, optimizer state, activations, buffers) beside the cost model&apos;s prediction.</source>
        <translation>Den Plan starten, um den Speicher jedes Ranks nach Kategorie (Parameter, Gradienten, Optimiererzustand, Aktivierungen, Puffer) neben der Vorhersage des Kostenmodells zu sehen.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run reports no memory yet.</source>
        <translation>Dieser Lauf meldet noch keinen Speicher.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/memory_panel.h" line="+14"/>
        <source>Memory by category</source>
        <translation>Speicher nach Kategorie</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::MetricPanel</name>
    <message>
        <location filename="../ui/dashboards/metric_panel.cpp" line="+22"/>
        <source>model FLOPs (MFU)</source>
        <translation>Modell-FLOPs (MFU)</translation>
    </message>
    <message numerus="yes">
        <location line="+26"/>
        <source>loss scale (fp16): %n update(s) skipped for overflow</source>
        <translation>
            <numerusform>Verlustskalierung (fp16): %n Aktualisierung wegen Überlauf übersprungen</numerusform>
            <numerusform>Verlustskalierung (fp16): %n Aktualisierungen wegen Überlauf übersprungen</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>loss scale: none (only fp16 training scales its loss)</source>
        <translation>Verlustskalierung: keine (nur fp16-Training skaliert den Verlust)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dp MB a rank, so far</source>
        <translation>dp-MB je Rang, bisher</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>total (right axis)</source>
        <translation>gesamt (rechte Achse)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>job tokens/s</source>
        <translation>Job-tokens/s</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>every step would: %1 MB (%2× more)</source>
        <translation>jeder Schritt hätte: %1 MB (%2× mehr)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>every step would: %1 MB</source>
        <translation>jeder Schritt hätte: %1 MB</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>no plan to count FLOPs from</source>
        <translation>kein Plan, aus dem sich FLOPs zählen lassen</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>achieved model TFLOP/s (job)</source>
        <translation>erreichte Modell-TFLOP/s (Job)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>TFLOP/s</source>
        <translation>TFLOP/s</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>MFU % (right axis)</source>
        <translation>MFU % (rechte Achse)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>MFU %</source>
        <translation>MFU %</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>MFU: no datasheet peak for this device (CPU)</source>
        <translation>MFU: kein Datenblatt-Spitzenwert für dieses Gerät (CPU)</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Launch the plan (Run › Launch) or open a run from the history to see %1 of every rank here.</source>
        <translation>Den Plan starten (Lauf › Starten) oder einen Lauf aus der Historie öffnen, um hier %1 jedes Ranks zu sehen.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run reports no %1.</source>
        <translation>Dieser Lauf meldet keine Werte für %1.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Waiting for the first step: %1 appear as the ranks report.</source>
        <translation>Warten auf den ersten Schritt: %1 erscheinen, sobald die Ranks melden.</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::Panel</name>
    <message>
        <location filename="../ui/dashboards/panel.cpp" line="-190"/>
        <source>loss</source>
        <translation>Loss</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>grad norm</source>
        <translation>Gradientennorm</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>learning rate</source>
        <translation>Lernrate</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step ms</source>
        <translation>Schritt ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>compute ms</source>
        <translation>Rechnen ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>communication ms</source>
        <translation>Kommunikation ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exposed communication ms</source>
        <translation>nicht überdeckte Kommunikation ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bubble ms</source>
        <translation>Bubble ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle ms</source>
        <translation>Leerlauf ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>parameter bytes</source>
        <translation>Parameter-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>gradient bytes</source>
        <translation>Gradienten-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>optimizer bytes</source>
        <translation>Optimierer-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>activation bytes</source>
        <translation>Aktivierungs-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>communication buffer bytes</source>
        <translation>Kommunikationspuffer-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>peak RSS bytes</source>
        <translation>Spitzen-RSS-Bytes</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>master weight bytes</source>
        <translation>Bytes der Master-Gewichte</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>loss scale (fp16)</source>
        <translation>Verlustskalierung (fp16)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dp MB all-reduced</source>
        <translation>dp-MB im All-Reduce</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>checkpoint ms (between steps)</source>
        <translation>Checkpoint-ms (zwischen den Schritten)</translation>
    </message>
    <message numerus="yes">
        <location line="+11"/>
        <source>%n outer step(s); </source>
        <translation>
            <numerusform>%n äußerer Schritt; </numerusform>
            <numerusform>%n äußere Schritte; </numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1× fewer</source>
        <translation>%1× weniger</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none sent yet</source>
        <translation>noch nichts gesendet</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1%2 MB all-reduced a rank instead of %3 MB every step would (%4)</source>
        <translation>%1%2 MB im All-Reduce je Rang statt %3 MB bei jedem Schritt (%4)</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::RanksPanel</name>
    <message>
        <location filename="../ui/dashboards/ranks_panel.cpp" line="+27"/>
        <source>Ranks</source>
        <translation>Ränge</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Hosts</source>
        <translation>Hosts</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Precision</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Kernels</source>
        <translation>Kernel</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Threads</source>
        <translation>Threads</translation>
    </message>
    <message numerus="yes">
        <location line="+17"/>
        <source>%1 (%n ranks)</source>
        <translation>
            <numerusform>%1 (%n Rang)</numerusform>
            <numerusform>%1 (%n Ränge)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+5"/>
        <source>fp32 kernels</source>
        <translation>fp32-Kernel</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Launch the plan to see its ranks here: which device, precision and kernels each runs (oneDNN&apos;s native bf16 GEMMs or fp32 ones on converted operands) and on how many threads.</source>
        <translation>Starten Sie den Plan, um hier seine Ränge zu sehen: welches Gerät, welche Genauigkeit und welche Kernel jeder nutzt (oneDNNs native bf16-GEMMs oder fp32-GEMMs auf umgewandelten Operanden) und mit wie vielen Threads.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No rank has said hello yet.</source>
        <translation>Noch hat sich kein Rang gemeldet.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/ranks_panel.h" line="+19"/>
        <source>Ranks and kernels</source>
        <translation>Ränge und Kernel</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::StallsPanel</name>
    <message>
        <location filename="../ui/dashboards/stalls_panel.cpp" line="+11"/>
        <source>stall s</source>
        <translation>Stocken s</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>rank %1: %2</source>
        <translation>Rank %1: %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No stalls: no rank has held the others up.</source>
        <translation>Kein Stocken: Kein Rank hat die anderen aufgehalten.</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n stall(s), %1 s in all, the longest %2 s; held by %3</source>
        <translation>
            <numerusform>%n Stocken, %1 s insgesamt, das längste %2 s; verursacht von %3</numerusform>
            <numerusform>%n Stockungen, %1 s insgesamt, die längste %2 s; verursacht von %3</numerusform>
        </translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Launch the plan to see its stalls here: each time a rank held the others up (stopped, silent or slow in a collective), when, for how long and how it ended.</source>
        <translation>Starten Sie den Plan, um hier sein Stocken zu sehen: jedes Mal, wenn ein Rank die anderen aufhielt (angehalten, stumm oder langsam in einer kollektiven Operation), wann, wie lange und wie es endete.</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/stalls_panel.h" line="+19"/>
        <source>Stalls</source>
        <translation>Stocken</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::TimelinePanel</name>
    <message>
        <location filename="../ui/dashboards/timeline_panel.cpp" line="+21"/>
        <source>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; weight gradients &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; send / receive (waiting for a peer) &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; idle (bubble) &amp;nbsp; numbers: micro-batches; each section is scaled to its own length; the wheel zooms, dragging pans</source>
        <translation>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; Forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; Backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; Gewichtsgradienten &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; Senden / Empfangen (Warten auf die Gegenstelle) &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; Leerlauf (Bubble) &amp;nbsp; Zahlen: Micro-Batches; jeder Abschnitt ist auf seine eigene Länge skaliert; das Mausrad zoomt, Ziehen verschiebt</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>measured bubble %1% (step %2, %3 ms)</source>
        <translation>gemessene Bubble %1 % (Schritt %2, %3 ms)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>predicted bubble %1% (%2 ms)</source>
        <translation>vorhergesagte Bubble %1 % (%2 ms)</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Launch the plan to see one traced step on every pipeline stage: forward, backward and communication as they ran, beside the schedule the planner predicted, and the bubble.</source>
        <translation>Den Plan starten, um einen aufgezeichneten Schritt auf jeder Pipeline-Stufe zu sehen: Forward, Backward und Kommunikation, wie sie abliefen, neben dem vom Planer vorhergesagten Schedule, und die Bubble.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>This run has no pipeline (pp 1): its traced steps appear here once the trainer writes one (telemetry › trace_every).</source>
        <translation>Dieser Lauf hat keine Pipeline (pp 1): seine aufgezeichneten Schritte erscheinen hier, sobald der Trainer einen schreibt (telemetry › trace_every).</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No traced step yet: the trainer traces one every few steps (telemetry › trace_every).</source>
        <translation>Noch kein aufgezeichneter Schritt: der Trainer zeichnet alle paar Schritte einen auf (telemetry › trace_every).</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/timeline_panel.h" line="+24"/>
        <source>Step timeline</source>
        <translation>Schritt-Zeitleiste</translation>
    </message>
</context>
<context>
    <name>trellis::ui::estimate::PlanComparison</name>
    <message>
        <location filename="../ui/estimate/plan_comparison.cpp" line="+20"/>
        <location line="+58"/>
        <source>Pin this plan</source>
        <translation>Diesen Plan anheften</translation>
    </message>
    <message>
        <location line="-57"/>
        <source>Use pinned plan</source>
        <translation>Angehefteten Plan übernehmen</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>What</source>
        <translation>Was</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Pinned</source>
        <translation>Angeheftet</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Now</source>
        <translation>Jetzt</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Change</source>
        <translation>Änderung</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Keep the plan as it is now (with its estimate) to compare your edits against</source>
        <translation>Den Plan im jetzigen Zustand (mit seiner Schätzung) festhalten, um spätere Änderungen damit zu vergleichen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Put the pinned plan back in the editor (one undo step)</source>
        <translation>Den angehefteten Plan wieder in den Editor übernehmen (ein Rückgängig-Schritt)</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Unpin</source>
        <translation>Lösen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;i&gt;Pin the plan to compare it with your edits: the fields that differ and the predicted memory, step time, tokens/s, MFU and cost of both.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Den Plan anheften, um ihn mit späteren Änderungen zu vergleichen: die abweichenden Felder sowie vorhergesagter Speicher, Schrittzeit, tokens/s, MFU und Kosten beider Pläne.&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;%1&lt;/b&gt; pinned</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; angeheftet</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · &lt;i&gt;the plan now has errors: no estimate&lt;/i&gt;</source>
        <translation> · &lt;i&gt;der Plan hat jetzt Fehler: keine Schätzung&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · &lt;i&gt;estimating the plan now…&lt;/i&gt;</source>
        <translation> · &lt;i&gt;der aktuelle Plan wird geschätzt…&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Plan fields that differ</source>
        <translation>Abweichende Planfelder</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>(none: the plan is the pinned one)</source>
        <translation>(keine: der Plan ist der angeheftete)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plan fields that differ (%1)</source>
        <translation>Abweichende Planfelder (%1)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Predicted</source>
        <translation>Vorhergesagt</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step time</source>
        <translation>Schrittzeit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  compute</source>
        <translation>  Rechnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  exposed communication</source>
        <translation>  nicht überdeckte Kommunikation</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  pipeline bubble</source>
        <translation>  Pipeline-Bubble</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>n/a (CPU)</source>
        <translation>k. A. (CPU)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cost a run</source>
        <translation>Kosten pro Lauf</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>peak memory a rank (GB)</source>
        <translation>Spitzenspeicher pro Rank (GB)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Memory per pipeline stage (GB)</source>
        <translation>Speicher pro Pipeline-Stufe (GB)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>stage %1</source>
        <translation>Stufe %1</translation>
    </message>
</context>
<context>
    <name>trellis::ui::plan_editor::MeshCanvas</name>
    <message>
        <location filename="../ui/plan/mesh_canvas.cpp" line="+124"/>
        <source>keep the world size</source>
        <translation>World Size beibehalten</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Data-parallel degree: replicas of the model</source>
        <translation>Datenparallelgrad: Replikate des Modells</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor-parallel degree: the arrows offer the divisors of the attention heads</source>
        <translation>Tensorparallelgrad: die Pfeile bieten die Teiler der Anzahl der Attention-Heads an</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline stages: the arrows offer up to the model&apos;s layers</source>
        <translation>Pipeline-Stufen: die Pfeile gehen bis zur Schichtzahl des Modells</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context-parallel degree: the sequence split across ranks</source>
        <translation>Kontextparallelgrad: die Sequenz wird auf Ranks aufgeteilt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert-parallel degree: divides dp and the experts</source>
        <translation>Expertenparallelgrad: teilt dp und die Anzahl der Experten</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Changing tp, pp or cp sets dp so that the ranks fill the same devices</source>
        <translation>Eine Änderung von tp, pp oder cp passt dp so an, dass die Ranks dieselben Geräte füllen</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Colour by</source>
        <translation>Färben nach</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Zoom out (Ctrl+wheel): node tiles when zoomed far out</source>
        <translation>Verkleinern (Strg+Mausrad): bei starker Verkleinerung Knotenkacheln</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Zoom in (Ctrl+wheel)</source>
        <translation>Vergrößern (Strg+Mausrad)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fit</source>
        <translation>Einpassen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fit the whole cluster into the view</source>
        <translation>Den ganzen Cluster in die Ansicht einpassen</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Set %1 to %2 (dp %3)</source>
        <translation>%1 auf %2 setzen (dp %3)</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>&lt;i&gt;Click a rank to see its coordinates and its groups.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Einen Rank anklicken, um seine Koordinaten und Gruppen zu sehen.&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>fit</source>
        <translation>eingepasst</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nodes</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 px</source>
        <translation>%1 px</translation>
    </message>
</context>
<context>
    <name>trellis::ui::plan_editor::PlanEditor</name>
    <message>
        <location filename="../ui/plan/plan_editor.cpp" line="+173"/>
        <source>Not used: trellis-trainer trains this plan.</source>
        <translation>Nicht verwendet: trellis-trainer trainiert diesen Plan.</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>(custom)</source>
        <translation>(benutzerdefiniert)</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Slots</source>
        <translation>Slots</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GPU model</source>
        <translation>GPU-Modell</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Add nodes</source>
        <translation>Knoten hinzufügen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copies of the last node, as many as the count beside: one undo step</source>
        <translation>Kopien des letzten Knotens, so viele wie die Zahl daneben: ein Rückgängig-Schritt</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove node</source>
        <translation>Knoten entfernen</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Select a node to remove (the last node stays)</source>
        <translation>Einen Knoten zum Entfernen auswählen (der letzte Knoten bleibt)</translation>
    </message>
    <message>
        <location line="-206"/>
        <source>&lt;b&gt;Problems&lt;/b&gt;</source>
        <translation>&lt;b&gt;Probleme&lt;/b&gt;</translation>
    </message>
    <message>
        <source>%1 — not used: trellis-trainer trains this plan</source>
        <translation type="vanished">%1 — nicht genutzt: trellis-trainer trainiert diesen Plan</translation>
    </message>
    <message numerus="yes">
        <location line="+228"/>
        <source>Set the cluster to this machine (%n core(s))</source>
        <translation>
            <numerusform>Cluster auf diesen Rechner setzen (%n Kern)</numerusform>
            <numerusform>Cluster auf diesen Rechner setzen (%n Kerne)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+116"/>
        <source>&lt;b&gt;%1&lt;/b&gt; — %2 ranks (dp %3 · tp %4 · pp %5 · cp %6) on &lt;span style=&apos;color:%7&apos;&gt;%8 slots&lt;/span&gt; of %9 node(s) · global batch %10 sequences × %11 tokens</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — %2 Ranks (dp %3 · tp %4 · pp %5 · cp %6) auf &lt;span style=&apos;color:%7&apos;&gt;%8 Slots&lt;/span&gt; von %9 Knoten · globaler Batch %10 Sequenzen × %11 Tokens</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> · experts over ep %1 (inside dp)</source>
        <translation> · Experten über ep %1 (innerhalb dp)</translation>
    </message>
    <message>
        <location line="-12"/>
        <source>&lt;b&gt;%1&lt;/b&gt; — runs its own trainer on %2 ranks (&lt;span style=&apos;color:%3&apos;&gt;%4 slots&lt;/span&gt; of %5 node(s)): &lt;code&gt;%6&lt;/code&gt;%7</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — führt seinen eigenen Trainer auf %2 Ranks aus (&lt;span style=&apos;color:%3&apos;&gt;%4 Slots&lt;/span&gt; von %5 Knoten): &lt;code&gt;%6&lt;/code&gt;%7</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · no model section: no estimate</source>
        <translation> · kein Modellabschnitt: keine Schätzung</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>node %1: </source>
        <translation>Knoten %1: </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>No problems: the plan is valid.</source>
        <translation>Keine Probleme: der Plan ist gültig.</translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::DashboardGrid</name>
    <message>
        <location filename="../ui/workspace/dashboard_grid.cpp" line="+80"/>
        <source>Click to collapse or expand; drop a panel here to move it into this section</source>
        <translation>Klicken zum Ein- oder Ausklappen; ein Panel hier ablegen, um es in diesen Abschnitt zu verschieben</translation>
    </message>
    <message numerus="yes">
        <location line="+91"/>
        <source>%1 (%n panel(s))</source>
        <translation>
            <numerusform>%1 (%n Panel)</numerusform>
            <numerusform>%1 (%n Panels)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::PanelFrame</name>
    <message>
        <location filename="../ui/workspace/panel_frame.cpp" line="+57"/>
        <source>Drag to move the panel; double-click to maximise it (Esc returns)</source>
        <translation>Ziehen, um das Panel zu verschieben; Doppelklick, um es zu maximieren (Esc kehrt zurück)</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+48"/>
        <source>Maximise (double-click the title; Esc returns)</source>
        <translation>Maximieren (Doppelklick auf den Titel; Esc kehrt zurück)</translation>
    </message>
    <message>
        <location line="-43"/>
        <source>Copy or save the chart</source>
        <translation>Diagramm kopieren oder speichern</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Copy image</source>
        <translation>Bild kopieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save as PNG…</source>
        <translation>Als PNG speichern…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save as SVG…</source>
        <translation>Als SVG speichern…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open in a window</source>
        <translation>In einem Fenster öffnen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset zoom of the step charts</source>
        <translation>Zoom der Schritt-Diagramme zurücksetzen</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>Back to the grid (Esc)</source>
        <translation>Zurück zum Raster (Esc)</translation>
    </message>
    <message>
        <location line="+26"/>
        <location line="+8"/>
        <location line="+3"/>
        <source>cannot write %1</source>
        <translation>%1 kann nicht geschrieben werden</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Save the chart</source>
        <translation>Diagramm speichern</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SVG (*.svg)</source>
        <translation>SVG (*.svg)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG (*.png)</source>
        <translation>PNG (*.png)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not saved</source>
        <translation>Nicht gespeichert</translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::StartPage</name>
    <message>
        <location filename="../ui/workspace/start_page.cpp" line="+51"/>
        <source>&lt;h1&gt;Trellis&lt;/h1&gt;&lt;p&gt;Plan a parallel training run, launch it, watch every rank.&lt;/p&gt;</source>
        <translation>&lt;h1&gt;Trellis&lt;/h1&gt;&lt;p&gt;Einen parallelen Trainingslauf planen, starten und jeden Rank beobachten.&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Start</source>
        <translation>Start</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>New plan for this machine</source>
        <translation>Neuer Plan für diesen Rechner</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A small GPT with one data-parallel rank per CPU core of this machine, ready to launch</source>
        <translation>Ein kleines GPT mit einem datenparallelen Rank pro CPU-Kern dieses Rechners, startbereit</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open a plan…</source>
        <translation>Plan öffnen…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Examples</source>
        <translation>Beispiele</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Recent plans</source>
        <translation>Zuletzt geöffnete Pläne</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Recent runs</source>
        <translation>Letzte Läufe</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>A tiny GPT on this machine&apos;s CPU, 4 data-parallel ranks: the first run to try</source>
        <translation>Ein winziges GPT auf der CPU dieses Rechners, 4 datenparallele Ranks: der erste Lauf zum Ausprobieren</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Two pipeline stages with the 1F1B schedule: watch the bubble in the step timeline</source>
        <translation>Zwei Pipeline-Stufen mit dem 1F1B-Schedule: die Bubble in der Schritt-Zeitleiste beobachten</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor parallelism over 2 ranks with sequence parallelism</source>
        <translation>Tensorparallelität über 2 Ranks mit Sequenzparallelität</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context parallelism: each sequence split over 2 ranks, zigzag layout</source>
        <translation>Kontextparallelität: jede Sequenz auf 2 Ranks aufgeteilt, zigzag-Aufteilung</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mixture of experts: 4 experts over 2 expert-parallel ranks, top-2 routing</source>
        <translation>Mixture of Experts: 4 Experten über 2 expertenparallele Ranks, Top-2-Routing</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A small llama (RMSNorm, SwiGLU, grouped-query attention) with tensor parallelism</source>
        <translation>Ein kleines Llama (RMSNorm, SwiGLU, Grouped-Query Attention) mit Tensorparallelität</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Llama 2 70B on 16 DGX H100 nodes (128 GPUs): estimate and search, not run here</source>
        <translation>Llama 2 70B auf 16 DGX-H100-Knoten (128 GPUs): schätzen und suchen, hier nicht ausführen</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The quick start on one CUDA GPU</source>
        <translation>Der Schnellstart auf einer CUDA-GPU</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>A plan that does not load: %1</source>
        <translation>Ein Plan, der sich nicht laden lässt: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 · %2 ranks</source>
        <translation>%1 · %2 Ranks</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>No plan opened yet: start from an example or a new plan.</source>
        <translation>Noch kein Plan geöffnet: mit einem Beispiel oder einem neuen Plan beginnen.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 · %2 · %3 · %4 ranks · %5 of %6 steps%7</source>
        <translation>%1 · %2 · %3 · %4 Ranks · %5 von %6 Schritten%7</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · loss %1</source>
        <translation> · Loss %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No run in this history yet: launch a plan (Run › Launch, Ctrl+R).</source>
        <translation>Noch kein Lauf in dieser Historie: einen Plan starten (Lauf › Starten, Strg+R).</translation>
    </message>
</context>
</TS>
